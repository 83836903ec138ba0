//go:build unix

package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// java, dotnet, lua/luajit and Rscript: the jar, source file, assembly or
// script they run is pinned; the forms that run code from elsewhere are
// refused, and so are the variables in the server's env that do the same.
func TestResolveLaunchRuntimes(t *testing.T) {
	fakeProgs(t, "java", "javaw", "jshell", "dotnet", "dnx", "lua", "luajit", "Rscript")
	work := t.TempDir()
	for _, f := range []string{"server.jar", "Srv.java", "server", "app.dll", "App.exe", "x.lua", "x.R"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(work, "adir"), 0o755)
	cases := []launchCase{
		// java -jar FILE: options before it, with their values, are skipped.
		{cmd: []string{"java", "-jar", "server.jar", "--port", "1"}, script: "server.jar"},
		{cmd: []string{"javaw", "-jar", "server.jar"}, script: "server.jar"},
		{cmd: []string{"java", "-Xmx512m", "-Dk=v", "-XX:+UseG1GC", "-ea", "-cp", "lib", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-jar", "server.jar"}, script: "server.jar"},
		{cmd: []string{"java", "--add-modules", "jdk.httpserver", "--enable-native-access", "ALL-UNNAMED", "--add-exports", "a/b=c",
			"--add-reads", "a=b", "--limit-modules", "java.base", "-classpath", "x", "--class-path", "y", "-jar", "server.jar"}, script: "server.jar"},
		{cmd: []string{"java", "--class-path=lib", "--add-modules=java.sql", "-jar", "server.jar"}, script: "server.jar"},
		// What follows the jar is the program's: not java's options.
		{cmd: []string{"java", "-jar", "server.jar", "-javaagent:x.jar", "@args", "-m", "x"}, script: "server.jar"},
		// Source-file mode: a .java file, or any file after --source.
		{cmd: []string{"java", "Srv.java", "a"}, script: "Srv.java"},
		{cmd: []string{"java", "-cp", "lib", "Srv.java"}, script: "Srv.java"},
		{cmd: []string{"java", "--source", "21", "server"}, script: "server"},
		{cmd: []string{"java", "--source=21", "server", "--flag"}, script: "server"},
		{cmd: []string{"java", "--source", "21"}, unpinned: "no file"},
		// A main class is not a file to pin, even when named like one.
		{cmd: []string{"java", "-cp", "lib", "Main"}, unpinned: "main class"},
		{cmd: []string{"java", "-cp", "server.jar", "com.example.Main"}, unpinned: "java -jar FILE"},
		{cmd: []string{"java", "server.jar"}, unpinned: "main class"},
		{cmd: []string{"java", "-classpath", "Srv.java", "Main"}, unpinned: "main class"},
		{cmd: []string{"java", "-m", "mod/pkg.Main"}, unpinned: "`-m`"},
		{cmd: []string{"java", "-p", "mods", "--module", "mod"}, unpinned: "`-p`"},
		{cmd: []string{"java", "--module=mod/pkg.Main"}, unpinned: "--module"},
		{cmd: []string{"java", "-p", "mods", "-jar", "server.jar"}, unpinned: "`-p`"},
		{cmd: []string{"java", "--module-path=mods", "-jar", "server.jar"}, unpinned: "--module-path"},
		{cmd: []string{"java", "--upgrade-module-path", "mods", "-jar", "server.jar"}, unpinned: "--upgrade-module-path"},
		{cmd: []string{"java", "--patch-module", "java.base=x.jar", "-jar", "server.jar"}, unpinned: "--patch-module"},
		{cmd: []string{"java", "@opts", "-jar", "server.jar"}, unpinned: "`@opts`"},
		{cmd: []string{"java", "-cp", "@cp", "Srv.java"}, unpinned: "`@cp`"},
		{cmd: []string{"java", "-jar", "@jar"}, unpinned: "`@jar`"},
		{cmd: []string{"java", "-javaagent:agent.jar", "-jar", "server.jar"}, unpinned: "-javaagent:agent.jar"},
		{cmd: []string{"java", "-agentlib:jdwp=transport=dt_socket", "-jar", "server.jar"}, unpinned: "-agentlib"},
		{cmd: []string{"java", "-agentpath:/opt/a.so", "-jar", "server.jar"}, unpinned: "-agentpath"},
		{cmd: []string{"java", "-Xbootclasspath/a:x.jar", "-jar", "server.jar"}, unpinned: "-Xbootclasspath"},
		{cmd: []string{"java", "-XX:OnOutOfMemoryError=sh x", "-jar", "server.jar"}, unpinned: "-XX:OnOutOfMemoryError"},
		{cmd: []string{"java", "-XX:VMOptionsFile=opts", "-jar", "server.jar"}, unpinned: "-XX:VMOptionsFile"},
		{cmd: []string{"java", "-jar"}, unpinned: "no file"},
		{cmd: []string{"java"}, unpinned: "no file"},
		{cmd: []string{"java", "-version"}, unpinned: "no file"},
		{cmd: []string{"java", "-jar", "missing.jar"}, err: "missing.jar"},
		{cmd: []string{"java", "-jar", "adir"}, unpinned: "not a regular file"},
		{cmd: []string{"jshell", "x.jsh"}, unpinned: "jshell"},
		// The JVM's option variables are read like the command's options.
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JAVA_TOOL_OPTIONS": "-Xmx1g -Dfile.encoding=UTF-8"}, script: "server.jar"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JDK_JAVA_OPTIONS": "--add-opens java.base/java.lang=ALL-UNNAMED"}, script: "server.jar"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JAVA_TOOL_OPTIONS": "-javaagent:/opt/otel.jar"}, unpinned: "JAVA_TOOL_OPTIONS"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JDK_JAVA_OPTIONS": "-Xmx1g @/tmp/opts"}, unpinned: "JDK_JAVA_OPTIONS"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"_JAVA_OPTIONS": `"-agentpath:/opt/a b.so"`}, unpinned: "_JAVA_OPTIONS"},
		{cmd: []string{"java", "Srv.java"}, env: map[string]string{"JDK_JAVA_OPTIONS": "--module-path=/mods"}, unpinned: "--module-path"},
		// Quotes join what they touch, as the launcher and the JVM read them.
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JAVA_TOOL_OPTIONS": "-java''agent:/opt/a.jar"}, unpinned: "JAVA_TOOL_OPTIONS"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: map[string]string{"JDK_JAVA_OPTIONS": `-agent"path:/opt/a.so"`}, unpinned: "JDK_JAVA_OPTIONS"},

		// dotnet FILE.dll and dotnet exec [options] FILE.dll.
		{cmd: []string{"dotnet", "app.dll", "--stdio"}, script: "app.dll"},
		{cmd: []string{"dotnet", "App.exe"}, script: "App.exe"},
		{cmd: []string{"dotnet", "exec", "--runtimeconfig", "app.runtimeconfig.json", "--depsfile", "app.deps.json", "app.dll"}, script: "app.dll"},
		{cmd: []string{"dotnet", "--roll-forward", "Major", "--fx-version", "8.0.1", "app.dll", "run"}, script: "app.dll"},
		{cmd: []string{"dotnet", "exec", "--additional-deps", "x.deps.json", "app.dll"}, unpinned: "--additional-deps"},
		{cmd: []string{"dotnet", "--additionalprobingpath", "/pkgs", "app.dll"}, unpinned: "--additionalprobingpath"},
		{cmd: []string{"dotnet", "run", "--project", "srv"}, unpinned: "`dotnet run`"},
		{cmd: []string{"dotnet", "tool", "run", "srv"}, unpinned: "`dotnet tool`"},
		{cmd: []string{"dotnet", "dnx", "pkg"}, unpinned: "`dotnet dnx`"},
		{cmd: []string{"dotnet", "watch"}, unpinned: "`dotnet watch`"},
		{cmd: []string{"dotnet", "srv.cs"}, unpinned: "dotnet FILE.dll"},
		{cmd: []string{"dotnet", "-d", "app.dll"}, unpinned: "`-d`"},
		{cmd: []string{"dotnet"}, unpinned: "no application"},
		{cmd: []string{"dotnet", "exec"}, unpinned: "no application"},
		{cmd: []string{"dotnet", "missing.dll"}, err: "missing.dll"},
		{cmd: []string{"dnx", "pkg"}, unpinned: "cannot pin"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"DOTNET_STARTUP_HOOKS": "/opt/hook.dll"}, unpinned: "DOTNET_STARTUP_HOOKS"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"DOTNET_GCPath": "/tmp/libgc.so"}, unpinned: "DOTNET_GCPath"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"DOTNET_DiagnosticPorts": "/tmp/port,connect"}, unpinned: "DOTNET_DiagnosticPorts"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"DOTNET_ADDITIONAL_DEPS": "/opt/x.deps.json"}, unpinned: "DOTNET_ADDITIONAL_DEPS"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"CORECLR_ENABLE_PROFILING": "1"}, unpinned: "CORECLR_ENABLE_PROFILING"},
		{cmd: []string{"dotnet", "app.dll"}, env: map[string]string{"CORECLR_ENABLE_PROFILING": "0", "DOTNET_gcServer": "1"}, script: "app.dll"},

		// lua and luajit: like the other script interpreters.
		{cmd: []string{"lua", "x.lua", "a"}, script: "x.lua"},
		{cmd: []string{"lua", "-W", "-E", "x.lua"}, script: "x.lua"},
		{cmd: []string{"luajit", "-O3", "x.lua"}, script: "x.lua"},
		{cmd: []string{"lua", "-e", "print(1)"}, unpinned: "`-e`"},
		{cmd: []string{"lua", "-e", "x=1", "x.lua"}, unpinned: "`-e`"},
		{cmd: []string{"lua", "-l", "socket", "x.lua"}, unpinned: "`-l`"},
		{cmd: []string{"lua", "-lsocket", "x.lua"}, unpinned: "`-lsocket`"},
		{cmd: []string{"lua", "-i", "x.lua"}, unpinned: "`-i`"},
		{cmd: []string{"lua", "-"}, unpinned: "`-`"},
		{cmd: []string{"luajit", "-jv", "x.lua"}, unpinned: "`-jv`"},
		{cmd: []string{"luajit", "-b", "x.lua", "x.out"}, unpinned: "`-b`"},
		{cmd: []string{"lua"}, unpinned: "no script file"},
		{cmd: []string{"lua", "x.lua"}, env: map[string]string{"LUA_INIT": "@/tmp/init.lua"}, unpinned: "LUA_INIT"},
		{cmd: []string{"luajit", "x.lua"}, env: map[string]string{"LUA_INIT_5_4": "os.execute('x')"}, unpinned: "LUA_INIT_5_4"},

		// Rscript [--options] FILE.
		{cmd: []string{"Rscript", "x.R", "--port", "1"}, script: "x.R"},
		{cmd: []string{"Rscript", "--vanilla", "--default-packages=methods,utils", "x.R"}, script: "x.R"},
		{cmd: []string{"Rscript", "-e", "source('x.R')"}, unpinned: "`-e`"},
		{cmd: []string{"Rscript", "--restore", "x.R"}, unpinned: "`--restore`"},
		{cmd: []string{"Rscript", "--args", "x.R"}, unpinned: "`--args`"},
		{cmd: []string{"Rscript", "--file=other.R", "x.R"}, unpinned: "--file"},
		// Rscript takes the first argument not starting with "--" for the
		// file: a one-letter option other than -e is the file's name.
		{cmd: []string{"Rscript", "-d", "gdb", "x.R"}, err: "-d"},
		// R's --encoding takes the next argument, which Rscript makes
		// --file=x.R: R would read its code from stdin.
		{cmd: []string{"Rscript", "--encoding", "x.R", "y.R"}, unpinned: "--encoding=VALUE"},
		{cmd: []string{"Rscript", "--debugger=gdb", "x.R"}, unpinned: "--debugger"},
		{cmd: []string{"Rscript", "-"}, unpinned: "stdin"},
		// A first argument of options is split, as for a #! line.
		{cmd: []string{"Rscript", "--vanilla --restore", "x.R"}, unpinned: "`--restore`"},
		{cmd: []string{"Rscript", "--vanilla --no-echo", "x.R"}, script: "x.R"},
		{cmd: []string{"Rscript"}, unpinned: "no script file"},
		{cmd: []string{"Rscript", "--vanilla"}, unpinned: "no script file"},
		{cmd: []string{"Rscript", "x.R"}, env: map[string]string{"R_PROFILE_USER": "/tmp/p.R"}, unpinned: "R_PROFILE_USER"},
		{cmd: []string{"Rscript", "x.R"}, env: map[string]string{"RHOME": "/tmp/evil"}, unpinned: "RHOME"},
		{cmd: []string{"Rscript", "x.R"}, env: map[string]string{"R_ENVIRON_USER": "/tmp/.Renviron"}, unpinned: "R_ENVIRON_USER"},
	}
	checkLaunchCases(t, work, cases)
}

// An approved `java -jar server.jar` whose jar is replaced afterwards: the
// next spawn pins the new jar, which is not approved, and is refused; java
// itself, unchanged and approved, does not carry the new jar through.
func TestJavaJarReplacedAfterApproval(t *testing.T) {
	dir := t.TempDir()
	java := filepath.Join(dir, "java") // stands in for java: runs the fake server
	if err := os.WriteFile(java, []byte("#!/bin/sh\nexec "+fakeBin+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(dir, "server.jar")
	if err := os.WriteFile(jar, []byte("PK approved"), 0o644); err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(jar); err == nil {
		jar = real
	}
	cfg := fake("jar")
	cfg.Command, cfg.Args, cfg.Cwd = java, []string{"-Xmx64m", "-jar", "server.jar"}, dir
	l, err := ResolveLaunch(cfg, nil)
	if err != nil || l.Unpinned != "" || l.Script != jar {
		t.Fatalf("resolve: %v %q; script %q, want the jar %s pinned", err, l.Unpinned, l.Script, jar)
	}
	a := &approvals{exec: map[string]bool{fileSum(t, java): true}, scripts: map[string]bool{l.ScriptSHA256: true}}
	m, _ := newTestManager(t, Options{VerifyLaunch: a.verify})
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "jar")

	renameOver(t, jar, "PK replaced")
	if err := m.Refresh(context.Background(), "jar"); err == nil {
		t.Fatal("refresh with a replaced jar succeeded")
	}
	st := waitFor(t, m, "jar", 20*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "supply_chain_unverified") || !strings.Contains(st.LastError, "--script-sha256 "+fileSum(t, jar)) {
		t.Errorf("last error %q; want the new jar's hash in the allow line", st.LastError)
	}
}
