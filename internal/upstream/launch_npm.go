package upstream

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

var (
	npmName     = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$`)
	exactSemver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// npxFlags are the npx options that do not change which package runs.
var npxFlags = map[string]bool{"-y": true, "--yes": true, "-q": true, "--quiet": true, "--silent": true,
	"--prefer-offline": true, "--offline": true, "--no-update-notifier": true}

// resolveNpx pins `npx [flags] NAME@X.Y.Z [args]`: it finds the package
// where npx would take it from (the project's tree, else the npx cache) and
// reads its version and integrity from that tree's lockfile into l. It
// returns why it cannot, with the fix, or "".
//
// Limits: npx also looks for a global install of the package (when its
// name is also a command there), which is not read, and npm's cache
// location is taken from npm_config_cache or the default, not from an
// .npmrc. The integrity is that of the package's tarball, which npm checked
// when it unpacked it; the unpacked files are not hashed again, nor the
// package's dependencies, nor npm's own code.
func resolveNpx(l *Launch, args []string, cwd string, env map[string]string) string {
	spec := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			spec = a
			break
		}
		if !npxFlags[a] && !strings.HasPrefix(a, "--loglevel=") {
			return fmt.Sprintf("clawd pins `npx [-y] NAME@VERSION [ARGS]`; the npx option %s may change what runs, so it cannot pin this command", a)
		}
	}
	if spec == "" {
		return "npx is given no package, so clawd cannot pin what it runs; use `npx -y NAME@VERSION`"
	}
	name, version := splitNpmSpec(spec)
	if !npmName.MatchString(name) {
		return fmt.Sprintf("%q is not a registry package name (a git, URL or path spec cannot be pinned); use `npx -y NAME@VERSION` with a package from the registry", spec)
	}
	if why := npxRunnerRefusal(spec, name); why != "" {
		return why
	}
	base := cwd
	if base == "" {
		base, _ = os.Getwd()
	}
	if !exactSemver.MatchString(version) {
		fix := name + "@VERSION (`npm view " + name + " version` prints the latest)"
		if v := installedVersion(name, base, env); v != "" {
			fix = name + "@" + v + " (the version installed here now)"
		}
		return fmt.Sprintf("`npx %s` is a floating spec: npx may fetch a different version at any start, so clawd cannot pin it; name an exact version: npx -y %s", spec, fix)
	}
	// The project's tree first, as npx does.
	if lock := filepath.Join(npmLocalPrefix(base), "node_modules", ".package-lock.json"); fileExists(lock) {
		if e, ok := lockEntry(lock, name, version); ok {
			return pinFromLock(l, name, version, lock, e)
		}
	}
	if pj := filepath.Join(npmLocalPrefix(base), "node_modules", filepath.FromSlash(name), "package.json"); fileExists(pj) {
		if v := packageVersion(pj); v == version {
			return fmt.Sprintf("%s@%s is installed in %s without a lockfile entry, so clawd cannot read its integrity; reinstall it with npm (npm install %s@%s)", name, version, filepath.Dir(pj), name, version)
		}
	}
	dir := npxCacheDir(spec, env)
	lock := filepath.Join(dir, "node_modules", ".package-lock.json")
	if e, ok := lockEntry(lock, name, version); ok {
		return pinFromLock(l, name, version, lock, e)
	}
	return fmt.Sprintf("%s@%s is not in npx's cache (%s), so npx would download it unseen; fetch it once with `npm exec --yes --package=%s -- true`, then approve it", name, version, dir, spec)
}

// npxPrograms are the programs of scoped packages whose name is not the
// package's own (npx runs the package's one bin, or the one named as the
// package without its scope).
var npxPrograms = map[string]string{"@babel/node": "babel-node"}

// npxRunnerRefusal says why `npx spec` (package name) runs code that the
// package's integrity does not cover, or "": its program is one clawd
// recognises as running a script, a program or a package named in its
// arguments (tsx, nodemon, cross-env, node itself), which the pin of the
// package leaves free to change.
func npxRunnerRefusal(spec, name string) string {
	prog := npxPrograms[name]
	if prog == "" {
		prog = name[strings.LastIndex(name, "/")+1:]
	}
	kind := launcherKind(prog)
	if kind == "" {
		return ""
	}
	if why := kindRefusal(kind, prog); why != "" {
		return fmt.Sprintf("`npx %s` runs %s, and clawd would pin only the package, not what %s runs: %s", spec, prog, prog, why)
	}
	return fmt.Sprintf("`npx %s` runs %s, which runs the code named in its arguments, and clawd would pin only the package, not that code; install %s and give it (with its script) as the command, so clawd pins the script", spec, prog, prog)
}

type lockPkg struct {
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
}

func pinFromLock(l *Launch, name, version, lock string, e lockPkg) string {
	if e.Integrity == "" {
		return fmt.Sprintf("%s@%s has no integrity in %s, so clawd cannot pin its content; reinstall it with npm", name, version, lock)
	}
	l.Package, l.Integrity, l.Lockfile = name+"@"+version, e.Integrity, lock
	return ""
}

// lockEntry finds name at version anywhere in an npm lockfile's tree.
func lockEntry(path, name, version string) (lockPkg, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return lockPkg{}, false
	}
	var lf struct {
		Packages map[string]lockPkg `json:"packages"`
	}
	if json.Unmarshal(b, &lf) != nil {
		return lockPkg{}, false
	}
	suffix := "node_modules/" + name
	if e, ok := lf.Packages[suffix]; ok && e.Version == version {
		return e, true
	}
	for k, e := range lf.Packages {
		if strings.HasSuffix(k, "/"+suffix) && e.Version == version {
			return e, true
		}
	}
	return lockPkg{}, false
}

// installedVersion is the version of name npx would find without a
// version: in the project's tree or the npx cache of the bare name.
func installedVersion(name, base string, env map[string]string) string {
	if v := packageVersion(filepath.Join(npmLocalPrefix(base), "node_modules", filepath.FromSlash(name), "package.json")); v != "" {
		return v
	}
	return packageVersion(filepath.Join(npxCacheDir(name, env), "node_modules", filepath.FromSlash(name), "package.json"))
}

func packageVersion(pj string) string {
	b, err := os.ReadFile(pj)
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil || !exactSemver.MatchString(p.Version) {
		return ""
	}
	return p.Version
}

// splitNpmSpec splits NAME[@VERSION], NAME possibly scoped (@scope/name).
func splitNpmSpec(spec string) (name, version string) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return spec, ""
	}
	return spec[:at], spec[at+1:]
}

// npmLocalPrefix is npm's project root for dir: the nearest directory,
// dir itself or above, holding a package.json or node_modules; dir if none.
func npmLocalPrefix(dir string) string {
	for d := dir; ; {
		if fileExists(filepath.Join(d, "package.json")) || fileExists(filepath.Join(d, "node_modules")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// npxCacheDir is where npx installs the packages of `npx spec`: the first
// 16 hex digits of the SHA-512 of the spec as typed, under <cache>/_npx
// (npm's libnpmexec).
func npxCacheDir(spec string, env map[string]string) string {
	cache := ""
	for k, v := range env {
		if strings.EqualFold(k, "npm_config_cache") {
			cache = v
		}
	}
	if cache == "" {
		for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
			if v := os.Getenv(k); v != "" {
				cache = v
				break
			}
		}
	}
	if cache == "" {
		if runtime.GOOS == "windows" {
			cache = filepath.Join(os.Getenv("LocalAppData"), "npm-cache")
		} else {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".npm")
		}
	}
	sum := sha512.Sum512([]byte(spec))
	return filepath.Join(cache, "_npx", hex.EncodeToString(sum[:])[:16])
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
