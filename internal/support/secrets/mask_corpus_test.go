package secrets

import (
	"strings"
	"testing"
)

// secretCorpus: secrets of the formats developers have, in the text they
// appear in (a command line, a config file's line, a tool's output).
// secret is the part that must not come out of MaskText: the random body,
// without the format's fixed prefix.
var secretCorpus = []struct{ name, in, secret string }{
	// GitHub.
	{"ghp echo", "echo ghp_R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u | gh auth login --with-token", "R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u"},
	{"gho", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a"},
	{"ghs clone", "git clone https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git", "16C7e42F292c6912E7710c838347Ae178B4a"},
	{"github_pat", "gh repo list --token github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234", "aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789"},
	{"github_pat bare", "remote: github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234", "aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789"},
	{"ghp as url user", "origin\thttps://ghp_R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u@github.com/o/r.git (fetch)", "R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u"},
	// GitLab.
	{"glpat bare", "echo glpat-x2Fq9ZbK7vR3mN8pW1tY", "x2Fq9ZbK7vR3mN8pW1tY"},
	{"glpat header", `curl --header "PRIVATE-TOKEN: glpat-x2Fq9ZbK7vR3mN8pW1tY" https://gitlab.com/api/v4/projects`, "x2Fq9ZbK7vR3mN8pW1tY"},
	{"glpat url user", "git clone https://oauth2:glpat-x2Fq9ZbK7vR3mN8pW1tY@gitlab.com/g/p.git", "x2Fq9ZbK7vR3mN8pW1tY"},
	{"glpat url token only", "git clone https://glpat-x2Fq9ZbK7vR3mN8pW1tY@gitlab.com/g/p.git", "x2Fq9ZbK7vR3mN8pW1tY"},
	{"glpat env", "export GITLAB_TOKEN=glpat-x2Fq9ZbK7vR3mN8pW1tY", "x2Fq9ZbK7vR3mN8pW1tY"},
	// Slack.
	{"xoxb", "SLACK_BOT=xoxb-2210535565-2273414584915-Zx7nQ4wLp9RbT2vK8mJc3Yd1", "2273414584915-Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"xoxp", "curl -d token=xoxp-2210535565-2210535571-2273414584915-9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e https://slack.com/api/x", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"xoxb bare", "slack: xoxb-2210535565-2273414584915-Zx7nQ4wLp9RbT2vK8mJc3Yd1", "Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"slack webhook", "curl -X POST https://hooks.slack.com/services/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 -d @msg.json", "k8Pq2ZxN7vR4mW9tYb3Lc6Jd"},
	// AWS.
	{"aws key id bare", "aws_access: AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
	{"aws key id echo", "echo AKIAI44QH8DHBEXAMPLE", "I44QH8DHBEXAMPLE"},
	{"aws sts id", `"AccessKeyId": "ASIAIOSFODNN7EXAMPLE"`, "IOSFODNN7EXAMPLE"},
	{"aws credentials id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
	{"aws credentials secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws configure prompt id", "AWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
	{"aws configure prompt secret", "AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws configure set", "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws export", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "IOSFODNN7EXAMPLE"},
	{"aws session token", "aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6", "IQoJb3JpZ2luX2VjEJr"},
	// Stripe.
	{"stripe sk_live", "stripe login --api-key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"},
	{"stripe sk_live bare", "Stripe::api_key = 'x'; key: sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"},
	{"stripe sk_live echo", "echo sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"},
	{"stripe rk_live", "curl https://api.stripe.com/v1/charges -u rk_live_51HxYzAbCdEf9gHiJkLmNoPq: -d x", "51HxYzAbCdEf9gHiJkLmNoPq"},
	{"stripe rk_live echo", "echo rk_live_51HxYzAbCdEf9gHiJkLmNoPq", "51HxYzAbCdEf9gHiJkLmNoPq"},
	{"stripe whsec", "echo whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	// Google.
	{"google api key", "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe'", "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"},
	{"google api key bare", "echo AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"},
	{"google oauth secret", "echo 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", "1r0aNcG8gddWyEgR6RWaAiJKr2SW"},
	// OpenAI, Anthropic, Hugging Face.
	{"openai sk", "echo sk-4fK9xQ2mZ7vB1nR8tY3wL6pJ0hD5cG2aE4uT7kL9qW1eR3tY", "4fK9xQ2mZ7vB1nR8tY3wL6pJ0hD5cG2aE4uT7kL9qW1eR3tY"},
	{"openai sk-proj", "OPENAI_API_KEY=sk-proj-4fK9xQ2mZ7vB1nR8tY3wL6pJ0hD5cG2aE4uT7kL9qW1eR3tY python x.py", "4fK9xQ2mZ7vB1nR8tY3wL6pJ0hD5cG2aE4uT7kL9qW1eR3tY"},
	{"openai sk-proj bare", "client = OpenAI(\"sk-proj-Ab3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmNoP\")", "Ab3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmNoP"},
	{"anthropic", "echo sk-ant-api03-Ab3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789-AbCdEfGhIjKlMnOpQrStUvWx-AAA", "Ab3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmNoPqRsTuVwXyZ"},
	{"hf", "huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIj", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIj"},
	{"hf bare random", "echo 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", "qWeRtYuIoPaSdFgHjKlZxCvBnMqWeRtYuI"},
	{"hf bare", "from_pretrained(m, use_auth=True) # 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", "kZbQmXwRtPvNcLsYhGdJfAeUiOyTqWrEbN"},
	// Discord: base64 of a numeric id, a timestamp, an HMAC.
	{"discord bot", "echo MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "ZnCjm1XVW7vRze4b7Cq4se7kKWs"},
	{"discord bot env", "DISCORD=Nzk5MjgxNDk0NDc2NDU1OTg3.YABS5g.2lmzECVlZv3vv6miVnUaKPQi2wI python bot.py", "2lmzECVlZv3vv6miVnUaKPQi2wI"},
	{"discord bot new", `client.run("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab")`, "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"},
	// npm, PyPI.
	{"npm token", "echo npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
	{"npmrc", "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
	{"npmrc plain", "//npm.pkg.github.com/:_authToken=f7e2a9c1", "f7e2a9c1"},
	{"npmrc _auth", "//registry.example.com/:_auth=Ym9iOmh1bnRlcjI=", "Ym9iOmh1bnRlcjI="},
	{"pypi", "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJDU2ZjA4YTY0LTEyMzQtNDU2Ny04OWFiLWNkZWYwMTIzNDU2NwACKlszLCJ4Il0", "AgEIcHlwaS5vcmcCJDU2ZjA4YTY0LTEyMzQtNDU2Ny04OWFi"},
	// JWT.
	{"jwt bearer", "curl -H \"Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\" x", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
	{"jwt bare", "id_token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"},
	{"jwt echo", "echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"},
	{"jwt echo short sig", "echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhb", "dBjftJeZ4CVPmB92K27uhb"},
	// PEM and SSH keys (an upstream's stderr, a cat in bash output).
	{"pem rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\nLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvre\nlpe9yc0=\n-----END RSA PRIVATE KEY-----", "lpe9yc0="},
	{"pem pkcs8 tail", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----", "NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"},
	{"pem short line", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\nAwEHoUQDQgAEPR3tU2Ss6pqbb8EH5yBfyGHc2Kb\n-----END EC PRIVATE KEY-----", "AwEHoUQDQgAEPR3tU2Ss6pqbb8EH5yBfyGHc2Kb"},
	{"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx3qvXz9M5JzvJYRQeSdc4XGxYl6sJ5rA8kJvH1m0pFAAAAJi6n3vLup97\ny7Q==\n-----END OPENSSH PRIVATE KEY-----", "QyNTUxOQAAACDx3qvXz9M5JzvJYRQeSdc4XGxYl6sJ5rA8kJvH1m0pFAAAAJi6n3vLup97"},
	{"pem printf", `printf '%s' '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACDx3q\n-----END OPENSSH PRIVATE KEY-----' > id`, "QyNTUxOQAAACDx3q"},
	{"pem cut", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTAp\nBgkqhk", "BgkqhkiG9w0BBQ0w"},
	{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF9x2kQBCAC7\n=Xk3j\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF9x2kQBCAC7"},
	{"pem one line", `"-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n"`, "MIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA"},
	// Database URLs and connection strings.
	{"postgres url", "psql postgres://app:Tr0ub4dor3@db.internal:5432/app", "Tr0ub4dor3"},
	{"postgresql url", "DATABASE_URL=postgresql://app:Tr0ub4dor3@db.internal:5432/app?sslmode=require", "Tr0ub4dor3"},
	{"mongodb srv", `mongosh "mongodb+srv://app:Tr0ub4dor3@cluster0.ab1cd.mongodb.net/prod"`, "Tr0ub4dor3"},
	{"redis url", "REDIS_URL=redis://:Tr0ub4dor3@cache:6379/0", "Tr0ub4dor3"},
	{"rediss url", "rediss://default:Tr0ub4dor3@cache.upstash.io:6379", "Tr0ub4dor3"},
	{"amqp url", "amqp://guest:Tr0ub4dor3@rabbit:5672/", "Tr0ub4dor3"},
	{"jdbc", "jdbc:postgresql://db:5432/app?user=app&password=Tr0ub4dor3", "Tr0ub4dor3"},
	{"mssql", "Server=tcp:x.database.windows.net,1433;Database=db;User ID=app;Password=Tr0ub4dor3;Encrypt=true", "Tr0ub4dor3"},
	{"url password with at", "postgres://app:Tr0ub@4dor3xyz@db:5432/app", "4dor3xyz"},
	{"azure storage", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"},
	{"azure servicebus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=k2Jf9Qx7Lm3Np8Rt4Vw1Yz6Bc0Dg5Hj2Km9Pq4St7Uv=", "k2Jf9Qx7Lm3Np8Rt4Vw1Yz6Bc0Dg5Hj2Km9Pq4St7Uv="},
	{"azure short key", "AccountName=acct;AccountKey=Zx7nQ4wLp9RbT2vK8mJc==;EndpointSuffix=core.windows.net", "Zx7nQ4wLp9RbT2vK8mJc"},
	{"azure sas", "azcopy copy f 'https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=co&sp=rwdlac&se=2025-01-01T00:00:00Z&spr=https&sig=k2Jf9Qx7Lm3Np8Rt%2BVw1Yz6Bc0Dg5Hj2Km9Pq4St7Uv%3D'", "Lm3Np8Rt"},
	// .env lines.
	{"env secret", "FOO_SECRET=Tr0ub4dor3", "Tr0ub4dor3"},
	{"env django", "DJANGO_SECRET_KEY='django-insecure-k#8m@z!q2$w'", "k#8m@z!q2$w"},
	{"env session key", "SESSION_KEY=Tr0ub4dor3", "Tr0ub4dor3"},
	{"env private key hex", "PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe512961708279f2e3e8a5d4b8e3e2b", "4c0883a69102937d6231471b5dbb6204fe5"},
	{"env mnemonic", `MNEMONIC="test test test test test test test test test test test junk"`, "test junk"},
	{"env creds", "SMTP_PASSWORD=Tr0ub4dor3", "Tr0ub4dor3"},
	{"env lowercase", "db_pass=Tr0ub4dor3", "Tr0ub4dor3"},
	{"env lowercase quoted", "admin_pass='Tr0ub 4dor3x' ./run", "Tr0ub 4dor3x"},
	{"yaml pass", "  smtp_pass: Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"js camel pass", "const cfg = { dbPass: 'Tr0ub4dor3x' }", "Tr0ub4dor3x"},
	{"properties camel pass", "smtpPass=Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"pass flag", "mytool --db-pass Tr0ub4dor3x --host db", "Tr0ub4dor3x"},
	{"pass query", "curl 'https://h/login?user=bob&pass=Tr0ub4dor3x'", "Tr0ub4dor3x"},
	{"env pw", "DB_PW=Tr0ub4dor3x ADMIN_PW=Tr0ub4dor3y ./start", "Tr0ub4dor3"},
	{"env pw lower", "export admin_pw=Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"env api", "SENDGRID_API_KEY=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", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc"},
	// Command lines.
	{"git clone token", "git clone https://bob:ghp_R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u@github.com/o/r.git", "R7d2Kq9XbN4mZ1vT8wY3pL6sJ0hF5cG2aE4u"},
	{"git clone no scheme", "git clone user:passw0rd1@host:repo", "passw0rd1"},
	{"curl -x no scheme", "curl -x bob:Tr0ub4dor3x@proxy.internal:3128 https://x", "Tr0ub4dor3x"},
	{"proxy env no scheme", "export https_proxy=bob:Tr0ub4dor3x@proxy.internal:3128", "Tr0ub4dor3x"},
	{"curl -x email user", "curl -x bob@corp.example:Tr0ub4dor3x@proxy:8080 https://x", "Tr0ub4dor3x"},
	{"curl -U", "curl -U bob:Tr0ub4dor3x -x proxy:3128 https://x", "Tr0ub4dor3x"},
	{"curl --proxy-user", "curl --proxy-user=bob:Tr0ub4dor3x -x proxy:3128 https://x", "Tr0ub4dor3x"},
	{"git insteadOf", `git config --global url."https://oauth2:Tr0ub4dor3x@github.com/".insteadOf "https://github.com/"`, "Tr0ub4dor3x"},
	{"curl bearer", "curl -H 'Authorization: Bearer Tr0ub4dor3x' https://api.x", "Tr0ub4dor3x"},
	{"curl -u", "curl -u bob:Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"curl --oauth2-bearer", "curl --oauth2-bearer Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"docker login", "docker login -u bob -p Tr0ub4dor3x ghcr.io", "Tr0ub4dor3x"},
	{"export token", "export X_TOKEN=Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"password flag", "tool --password=Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"api-key flag", "tool --api-key Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"basic header", "Authorization: Basic Ym9iOlRyMHViNGRvcjN4", "Ym9iOlRyMHViNGRvcjN4"},
	{"wget password", "wget --user=bob --password=Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"http-password", "wget --http-password=Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"sqlcmd", "sqlcmd -S db -U sa -P Tr0ub4dor3x -Q 'select 1'", "Tr0ub4dor3x"},
	{"psql conninfo", `psql "host=db user=app password=Tr0ub4dor3x dbname=app"`, "Tr0ub4dor3x"},
	{"kubectl literal", "kubectl create secret generic db --from-literal=DB_PASS=Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"kubectl literal stripe", "kubectl create secret generic pay --from-literal=stripe=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"},
	{"kubectl yaml password", "  password: VHIwdWI0ZG9yM3g=", "VHIwdWI0ZG9yM3g="},
	{"kubectl yaml tls key", "  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Fo"},
	{"dockerconfigjson", `  .dockerconfigjson: eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJZbTlpT21kb2NGOVNOMlF5In19fQ==`, "eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJZbTlp"},
	{"docker config auth", `"auths": {"ghcr.io": {"auth": "Ym9iOmdocF9SN2QySw=="}}`, "Ym9iOmdocF9SN2QySw=="},
	{"netrc", "machine api.heroku.com login me@example.com password 01234567-89ab-cdef-0123-456789abcdef", "01234567-89ab-cdef-0123-456789abcdef"},
	// A password as a positional argument.
	{"htpasswd", "htpasswd -bc .htpasswd bob Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"htpasswd -n", "htpasswd -nbB bob Tr0ub4dor3x > users", "Tr0ub4dor3x"},
	{"htpasswd cost", "sudo /usr/bin/htpasswd -B -C 12 -b /etc/nginx/.htpasswd 'bob' 'Tr0ub 4dor3x'", "Tr0ub 4dor3x"},
	{"openssl passwd", "openssl passwd -6 -salt xyz Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"mkpasswd", "mkpasswd -m sha-512 Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"wpa_passphrase", "wpa_passphrase HomeNet Tr0ub4dor3x >> /etc/wpa_supplicant.conf", "Tr0ub4dor3x"},
	{"poetry http-basic", "poetry config http-basic.private bob Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"rabbitmqctl", "rabbitmqctl add_user bob Tr0ub4dor3x && rabbitmqctl set_user_tags bob admin", "Tr0ub4dor3x"},
	{"net user", "net user bob Tr0ub4dor3x /add", "Tr0ub4dor3x"},
	{"net use", `net use Z: \\srv\share Tr0ub4dor3x /user:CORP\bob`, "Tr0ub4dor3x"},
	{"dscl", "sudo dscl . -passwd /Users/bob Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"chpasswd", "echo 'bob:Tr0ub4dor3x' | chpasswd", "Tr0ub4dor3x"},
	{"chpasswd here", "chpasswd <<< \"bob:Tr0ub4dor3x\"", "Tr0ub4dor3x"},
	{"sudo -S", "echo Tr0ub4dor3x | sudo -S apt-get update", "Tr0ub4dor3x"},
	{"password-stdin", "echo -n 'Tr0ub4dor3x' | docker login -u bob --password-stdin ghcr.io", "Tr0ub4dor3x"},
	{"passwd stdin", "echo Tr0ub4dor3x | passwd --stdin bob", "Tr0ub4dor3x"},
	// A password flag of a tool where the flag means password.
	{"ldapsearch -w", "ldapsearch -x -D cn=admin,dc=ex,dc=com -w Tr0ub4dor3x -b dc=ex,dc=com", "Tr0ub4dor3x"},
	{"ldappasswd -a -s", "ldappasswd -x -D cn=admin -a Tr0ub4dor3x -s N3wPassw0rd uid=bob", "N3wPassw0rd"},
	{"keytool", "keytool -importkeystore -srckeystore a.p12 -srcstorepass Tr0ub4dor3x -deststorepass Tr0ub4dor3y", "Tr0ub4dor3y"},
	{"jarsigner", "jarsigner -storepass Tr0ub4dor3x app.jar alias", "Tr0ub4dor3x"},
	{"zip -P", "zip -P Tr0ub4dor3x secret.zip a.txt", "Tr0ub4dor3x"},
	{"unzip -P", "unzip -o -P Tr0ub4dor3x secret.zip", "Tr0ub4dor3x"},
	{"7z -p", "7z a -pTr0ub4dor3x -mhe=on x.7z dir", "Tr0ub4dor3x"},
	{"unrar -p", "unrar x -pTr0ub4dor3x a.rar", "Tr0ub4dor3x"},
	{"mongosh -p", "mongosh -u admin -p Tr0ub4dor3x --authenticationDatabase admin", "Tr0ub4dor3x"},
	{"mongodump -p", "mongodump -u admin -p Tr0ub4dor3x --db app", "Tr0ub4dor3x"},
	{"twine -p", "twine upload -u bob -p Tr0ub4dor3x dist/*", "Tr0ub4dor3x"},
	{"az login", "az login -u bob@example.com -p Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"oc login", "oc login -u dev -p Tr0ub4dor3x https://api:6443", "Tr0ub4dor3x"},
	{"cf login", "cf login -a api -u bob -p Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"smbclient -U", "smbclient //srv/share -U bob%Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"rpcclient -U", `rpcclient -U 'CORP\bob%Tr0ub4dor3x' 10.0.0.1`, "Tr0ub4dor3x"},
	{"lftp -u", "lftp -u bob,Tr0ub4dor3x ftp.example.com", "Tr0ub4dor3x"},
	{"openssl enc -k", "openssl enc -aes-256-cbc -k Tr0ub4dor3x -in a -out b", "Tr0ub4dor3x"},
	{"ssh-keygen -N -P", "ssh-keygen -p -N Tr0ub4dor3x -P 0ldPassw0rd -f key", "0ldPassw0rd"},
	{"xfreerdp", "xfreerdp /u:bob /p:Tr0ub4dor3x /v:host", "Tr0ub4dor3x"},
	{"rdesktop", "rdesktop -u bob -p Tr0ub4dor3x host", "Tr0ub4dor3x"},
	{"psexec", `psexec \\host -u bob -p Tr0ub4dor3x cmd`, "Tr0ub4dor3x"},
	{"dotnet nuget", "dotnet nuget add source https://x -u bob -p Tr0ub4dor3x --store-password-in-clear-text", "Tr0ub4dor3x"},
	{"gh secret set", "gh secret set X --body Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"gh secret set -b", "gh secret set X -b Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"doctl -t", "doctl auth init -t Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"httpie -a", "http -a bob:Tr0ub4dor3x example.org", "Tr0ub4dor3x"},
	{"cargo login", "cargo login Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"vault unseal", "vault operator unseal Tr0ub4dor3xTr0ub4dor3xTr0ub4=", "Tr0ub4dor3x"},
	{"consul agent token", "consul acl set-agent-token agent Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"poetry pypi-token", "poetry config pypi-token.pypi Tr0ub4dor3x", "Tr0ub4dor3x"},
	// Oracle's user/password.
	{"sqlplus", "sqlplus scott/Tr0ub4dor3x@orcl", "Tr0ub4dor3x"},
	{"sqlplus ezconnect", "sqlplus -s system/Tr0ub4dor3x@//db:1521/XEPDB1 @script.sql", "Tr0ub4dor3x"},
	{"expdp", "expdp scott/Tr0ub4dor3x directory=d dumpfile=x.dmp", "Tr0ub4dor3x"},
	{"jdbc thin", "jdbc:oracle:thin:scott/Tr0ub4dor3x@db:1521:orcl", "Tr0ub4dor3x"},
	// Names that hold a secret.
	{"sshpass env", "SSHPASS=Tr0ub4dor3x sshpass -e ssh h", "Tr0ub4dor3x"},
	{"wordpress salt", "NONCE_SALT=Tr0ub4dor3x AUTH_SALT=Tr0ub4dor3y", "Tr0ub4dor3x"},
	{"nmcli psk", "nmcli con modify HomeNet wifi-sec.psk Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"wpa psk", `  psk="Tr0ub4dor3x"`, "Tr0ub4dor3x"},
	{"interfaces psk", "wpa-psk Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"apim key", `curl -H "Ocp-Apim-Subscription-Key: Tr0ub4dor3x" https://x`, "Tr0ub4dor3x"},
	{"az account key", "az storage blob upload --account-key Tr0ub4dor3x -f x", "Tr0ub4dor3x"},
	{"powershell securestring", `$p = ConvertTo-SecureString 'Tr0ub4dor3x' -AsPlainText -Force`, "Tr0ub4dor3x"},
	// More shapes of the same: curl's combined flags and certificate
	// password, env dumps, query values, secrets from literals, here-strings.
	{"curl -su", "curl -su bob:Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"curl -sSfu", "curl -sSfu bob:Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"curl -E", "curl -E cert.pem:Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"curl --cert", "curl --cert client.pem:Tr0ub4dor3x https://x", "Tr0ub4dor3x"},
	{"docker inspect cookie", `"Env": ["RABBITMQ_ERLANG_COOKIE=Tr0ub4dor3x","ERLANG_COOKIE=Tr0ub4dor3y"]`, "Tr0ub4dor3"},
	{"env PASS", "PASS=Tr0ub4dor3x ./run", "Tr0ub4dor3x"},
	{"env PW", `"Env": ["PW=Tr0ub4dor3x"]`, "Tr0ub4dor3x"},
	{"query key", "curl 'https://x/api?key=Tr0ub4dor3x'", "Tr0ub4dor3x"},
	{"query code", "GET /callback?code=Tr0ub4dor3x&state=1", "Tr0ub4dor3x"},
	{"query session", "curl 'https://x/api?sessionid=Tr0ub4dor3x'", "Tr0ub4dor3x"},
	{"query signature", "https://b.s3.amazonaws.com/k?X-Amz-Signature=Tr0ub4dor3x&X-Amz-Date=1", "Tr0ub4dor3x"},
	{"kubectl literal any key", "kubectl create secret generic x --from-literal=api=Tr0ub4dor3x --from-literal=user=Tr0ub4dor3y", "Tr0ub4dor3"},
	{"cqlsh -p", "cqlsh -u cassandra -p Tr0ub4dor3x h", "Tr0ub4dor3x"},
	{"snowsql -p", "snowsql -a acct -u bob -p Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"cypher-shell -p", "cypher-shell -u neo4j -p Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"rabbitmqadmin -p", "rabbitmqadmin -u bob -p Tr0ub4dor3x list queues", "Tr0ub4dor3x"},
	{"isql", "isql -v DSN bob Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"mc alias", "mc alias set s3 https://s3.example.com AKIAXX Tr0ub4dor3xTr0ub", "Tr0ub4dor3x"},
	{"sudo here-string", "sudo -S <<< Tr0ub4dor3x whoami", "Tr0ub4dor3x"},
	{"cryptsetup here-string", "cryptsetup luksOpen /dev/sda1 x <<< Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"smbpasswd here-string", `smbpasswd -a bob <<< "Tr0ub4dor3x"`, "Tr0ub4dor3x"},
	{"podman secret here-string", "podman secret create db - <<< Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"printf sudo", `printf 'Tr0ub4dor3x\n' | sudo -S whoami`, "Tr0ub4dor3x"},
	{"yes passwd", "yes Tr0ub4dor3x | passwd bob", "Tr0ub4dor3x"},
	{"echo smbpasswd", "echo Tr0ub4dor3x | smbpasswd -s -a bob", "Tr0ub4dor3x"},
	// SQL and other client shapes.
	{"mysql identified by", `mysql -e "CREATE USER 'bob'@'%' IDENTIFIED BY 'Tr0ub4dor3x'"`, "Tr0ub4dor3x"},
	{"oracle identified by", "ALTER USER scott IDENTIFIED BY Tr0ub4dor3x;", "Tr0ub4dor3x"},
	{"db2 using", "db2 connect to sample user db2inst1 using Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"pgpass", "echo 'db.internal:5432:app:bob:Tr0ub4dor3x' >> ~/.pgpass", "Tr0ub4dor3x"},
	{"pgpass wildcard", "*:*:*:postgres:Tr0ub4dor3x", "Tr0ub4dor3x"},
	{"plink -pw", "plink -ssh bob@host -pw Tr0ub4dor3x uptime", "Tr0ub4dor3x"},
	{"pscp -pw", "pscp -pw Tr0ub4dor3x file bob@host:/tmp", "Tr0ub4dor3x"},
	{"schtasks /RP", `schtasks /create /tn t /tr x.exe /sc daily /RU CORP\bob /RP Tr0ub4dor3x`, "Tr0ub4dor3x"},
	// More URL and config shapes.
	{"url json escaped", `{"url":"https:\/\/u:Hunter2xyz@h\/x"}`, "Hunter2xyz"},
	{"url quoted blank", `curl "https://u:Hunter2 xyz@h/x"`, "Hunter2 xyz"},
	{"maven settings", "<server><id>x</id><username>bob</username><password>Hunter2xyz</password></server>", "Hunter2xyz"},
	{"xml api key", "<ApiKey>Hunter2xyz</ApiKey>", "Hunter2xyz"},
	{"makefile :=", "PASSWORD := Hunter2xyz", "Hunter2xyz"},
	{"makefile ?=", "db_password ?= Hunter2xyz", "Hunter2xyz"},
	// Commands that store a secret, and environment lists.
	{"az keyvault", "az keyvault secret set --vault-name v --name db --value Hunter2xyz", "Hunter2xyz"},
	{"aws ssm", "aws ssm put-parameter --name /db/pw --type SecureString --value Hunter2xyz", "Hunter2xyz"},
	{"macos keychain", "security add-generic-password -a bob -s svc -w Hunter2xyz", "Hunter2xyz"},
	{"vault kv put", "vault kv put secret/app db=Hunter2xyz user=Hunter3xyz", "Hunter2xyz"},
	{"gcloud secrets", "gcloud secrets create db --data-file=- <<< Hunter2xyz", "Hunter2xyz"},
	{"gcloud secrets echo", "echo -n Hunter2xyz | gcloud secrets versions add db --data-file=-", "Hunter2xyz"},
	{"secret-tool", "secret-tool store --label=x svc y <<< Hunter2xyz", "Hunter2xyz"},
	{"k8s env yaml", "- name: DB_PASS\n  value: Hunter2xyz", "Hunter2xyz"},
	{"k8s env yaml quoted", "- name: POSTGRES_PASSWORD\n  value: \"Hunter2xyz\"", "Hunter2xyz"},
	{"k8s env json", `"env":[{"name":"API_KEY","value":"Hunter2xyz"}]`, "Hunter2xyz"},
	// Other services.
	{"twilio sid token", "curl -u AC5ef8732a3c49700934481addd5ce1659:9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e https://api.twilio.com", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"twilio key bare", "echo SK2f9c1a7e5b2d4f6a8c0e1b3d5f7a9c2e 9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"sendgrid", "echo 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", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc"},
	{"sendgrid id", "echo 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", "ngeVfQFYQlKU0ufo8x5d1A"},
	{"datadog", "DD_API_KEY=9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e DD_APP_KEY=9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e1b3d5f7a", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"datadog header", "curl -H 'DD-API-KEY: 9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e' https://api.datadoghq.com", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"heroku key", "HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef heroku apps", "01234567-89ab-cdef-0123-456789abcdef"},
	{"heroku hrku", "echo HRKU-AAb3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmN", "b3dEf_Gh1jKlMn-Op4rStUvWx7yZ0aBcDeFgHiJkLmN"},
	{"telegram bot", "curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"},
	{"vault", "vault login hvs.CAESIJ7xR4mZ2vK8nQ1pW5tY9bL3cF6hD0jG4aE7uT2kL9qWGh4KHGh2cy5aN2t4UTRtWjJ2SzhuUTFwVzV0WTk", "CAESIJ7xR4mZ2vK8nQ1pW5tY9bL3cF6hD0jG4aE7uT2kL9qW"},
	{"vault flags", "vault login -address=https://vault:8200 -no-print hvs.CAESIJ7xR4mZ2vK8nQ1pW5", "CAESIJ7xR4mZ2vK8nQ1pW5"},
	{"vault quoted", "vault login 's.Zx7nQ4wLp9RbT2vK8mJc3Yd1' && vault kv get x", "Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"bcp", "bcp dbo.t out t.dat -S db -U sa -PTr0ub4dor3x -c", "Tr0ub4dor3x"},
	{"seed phrase", "SEED_PHRASE='ocean ladder quantum velvet'", "quantum velvet"},
	{"vault old", "vault login s.Zx7nQ4wLp9RbT2vK8mJc3Yd1", "Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"shopify", "echo 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", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"digitalocean", "doctl auth init -t dop_v1_9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"mailgun", "curl -s --user 'api:key-9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e' https://api.mailgun.net/v3", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	{"linear", "echo lin_api_Zx7nQ4wLp9RbT2vK8mJc3Yd1Ab3dEf5Gh7jKlMn9", "Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"doppler", "echo dp.st.dev.Zx7nQ4wLp9RbT2vK8mJc3Yd1Ab3dEf5Gh7jKlMn9", "Zx7nQ4wLp9RbT2vK8mJc3Yd1"},
	{"postman", "echo PMAK-62a8b3c4d5e6f7a8b9c0d1e2-9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e11", "9f3c1a7e5b2d4f6a8c0e1b3d5f7a9c2e"},
}

// secretCorpusGaps are secrets MaskText still shows: no pattern tells
// them from ordinary text without mangling it.
//
//   - short base64 under a key that names no secret (a Secret's data:).
var secretCorpusGaps = []struct{ name, in, secret string }{
	// GAPS
	{"kubectl yaml other", "  stripe: c2tfbGl2ZV80ZUMzOUhxTHlq", "c2tfbGl2ZV80ZUMzOUhxTHlq"},
}

func TestMaskTextCorpus(t *testing.T) {
	for _, c := range secretCorpus {
		out := MaskText(c.in)
		if leaked := leak(out, c.secret); leaked != "" {
			t.Errorf("%s: MaskText(%q)\n = %q\nshows %q", c.name, c.in, out, leaked)
		}
	}
	for _, c := range secretCorpusGaps {
		if out := MaskText(c.in); leak(out, c.secret) == "" {
			t.Errorf("%s: MaskText(%q) = %q: masked now, move it to secretCorpus", c.name, c.in, out)
		}
	}
}

// TestMaskTextCorpusKeepsOrdinaryText: text that holds the new rules'
// hints (sg., asia, eyJ, private key, sig=, vault, sqlcmd, bcp, gl...-)
// but no secret stays as it is.
func TestMaskTextCorpusKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"msg.Send(ctx, sg.Next())",
		"TZ=Asia/Kolkata date",
		"echo ASIAN AKIA",
		"grep -rn -- '-----BEGIN RSA PRIVATE KEY-----' keys/",
		"openssl genpkey -algorithm ed25519 -out private key.pem",
		"if strings.HasPrefix(s, \"-----BEGIN PRIVATE KEY-----\") {",
		"vault status; vault login -method=userpass username=bob",
		"vault login",
		"sqlcmd -S db -E -Q 'select 1'",
		"bcp dbo.t out t.dat -S db -T -c",
		"curl 'https://x/api?sig=' -o f",
		"git log --show-signature -1",
		"see docs/glpat-tokens.md and gldt-",
		"data := `eyJ` + enc",
		"const jwtPrefix = \"eyJ\" // base64 of '{\"'",
		"MNEMONIC_LEN=12 go run .",
		"postgres://app@db:5432/app?sslmode=require",
		"git diff HEAD~1 -- internal/support/secrets/mask.go",
		"git show 8f14e45fc --stat; git rebase -i HEAD~3",
		"cat ~/.ssh/id_ed25519.pub ~/.npmrc .env ~/.aws/config",
		"aws sts get-caller-identity --profile dev",
		"ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519 -C me@example.com",
		"func parseJWT(tok string) (*Claims, error) { parts := strings.Split(tok, \".\")",
		"docker pull nginx:1.25@sha256:" + strings.Repeat("ab", 32),
		"mailto:bob@example.com and sip:alice@example.com",
		"implementation 'com.example:lib:1.0@aar'",
		"npm i alias@npm:other@1.0 && git push origin HEAD@{1}:main",
		"ssh -p 2222 git@github.com:owner/repo.git; rsync -a bob@host:/src/ dst/",
		"java -cp build/classes com.example.MyApplicationServiceMain.runner.AbstractSingletonProxyFactoryBean",
		"MDN7c2VydmljZS1uYW1lLWxvbmc.config.DefaultConfigurationLoaderImpl",
		"first_pass=0 num_pass=3 two_pass = False; skip_pass: true",
		"render_pass = make_pass(cfg); x_pass = self.config.x_pass",
		`db_pass=$DB_PASS admin_pass="${ADMIN_PASS}" pass=%PASS%`,
		"--- PASS: TestX (0.00s)\nall tests pass: 12 of 12",
		"bypass=1 compass=north --bypass-cache",
		"let renderPass: GPURenderPassEncoder; shadowPass = new ShadowPass()",
		"if ok { pass = true }; first_pass: int = 0",
		"make -j4 pass=2 && echo 'pass' >> log",
		"cat .htpasswd; htpasswd -D users bob; htpasswd -c users bob",
		"openssl passwd -6 -stdin < pw.txt; mkpasswd -s < pw.txt",
		"net user bob /delete; net user; net use Z: \\\\srv\\share /user:bob",
		"poetry config --list; poetry config virtualenvs.in-project true",
		"rabbitmqctl list_users; echo $PASSWORD | sudo -S true",
		"echo done | tee log; echo 'bob:x' > users.txt",
		"gh pr create -b 'fix the build' -t title; zip -r out.zip dir; 7z x a.7z -o/tmp",
		"ssh-keygen -t ed25519 -f key; openssl req -new -key k.pem -out r.csr",
		"mongosh --port 27017; smbclient -L //srv -U bob; lftp -u bob ftp.example.com",
		"curl http://example.com -a; sqlplus / as sysdba; sqlplus -s /nolog @x.sql",
		"cargo login; cargo build; vault operator unseal; vault operator unseal -reset",
		"curl -sSfL https://x -o out; curl -su bob https://x",
		"kubectl create configmap c --from-literal=level=debug; cat <<< hello; grep x <<< \"$out\"",
		"https://example.com/search?q=go&page=2&sort=key; yes | apt-get install x",
		"DECOMPRESS=1 COMPASS=north PASSES=3 BYPASS=1",
		"SELECT * FROM t WHERE user = 'bob' ORDER BY id; git log --since 10:30:00",
		"ssh bob@host -p 2222; schtasks /query /tn t; plink -load session",
		"time 12:30:45; ffmpeg -ss 00:01:02.5 -t 00:00:10 -i in.mp4 out.mp4",
		`{"text": "see https://h:8443/x and write to bob@example.com"}`,
		"<keyword>go</keyword><tokenizer>x</tokenizer>",
		"- name: LOG_LEVEL\n  value: debug; vault kv get secret/app; vault kv put secret/app @data.json",
		"security find-generic-password -s svc; aws ssm get-parameter --name x; az keyvault list",
	} {
		if got := MaskText(s); got != s {
			t.Errorf("MaskText(%q) = %q, want it unchanged", s, got)
		}
	}
}

// leak is the longest run (of 6 or more bytes) of secret that out shows,
// or "".
func leak(out, secret string) string {
	best := ""
	for i := 0; i < len(secret); i++ {
		for j := i + 6; j <= len(secret); j++ {
			if !strings.Contains(out, secret[i:j]) {
				break
			}
			if j-i > len(best) {
				best = secret[i:j]
			}
		}
	}
	return best
}

// TestMaskTextURLPasswords: a URL's password is masked whatever it holds
// ('#', '?', '/', an encoded '@'), whatever the scheme or the host (an
// IPv6 one), and the host stays shown: after a token given as a
// "oauth2:" user, and when an '@' starts a path segment.
func TestMaskTextURLPasswords(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://u:pa#ss@h/mcp", "https://u:***@h/mcp"},
		{"https://u:pa?ss@h/mcp", "https://u:***@h/mcp"},
		{"https://u:12/ss@h/mcp", "https://u:***@h/mcp"},
		{"git clone https://u:pa/ss#x@h/r.git", "git clone https://u:***@h/r.git"},
		{"https://u:pa%40ss@h/mcp", "https://u:***@h/mcp"},
		{"https://u:p@ss@h/mcp", "https://u:***@h/mcp"},
		{"http://u:pw@[::1]:8080/mcp", "http://u:***@[::1]:8080/mcp"},
		{"git+ssh://u:pwsecret@h/repo", "git+ssh://u:***@h/repo"},
		{"redis://:pass@host", "redis://:***@host"},
		{"git clone https://oauth2:TOKEN@host/x", "git clone https://oauth2:***@host/x"},
		{"https://h:8443/@owner/mcp", "https://h:8443/@owner/mcp"},
		{"https://h/@owner/mcp", "https://h/@owner/mcp"},
		{`{"url":"https://u:pw@h/x","to":"bob@example.com"}`, `{"url":"https://u:***@h/x","to":"bob@example.com"}`},
		{`curl 'https://u:pa"ss@h/x'`, `curl 'https://u:***@h/x'`},
		{"open https://h/r?next=https://v:pw2@g/x", "open https://h/r?next=https://v:***@g/x"},
		{"ssh://git@github.com/o/r.git", "ssh://git@github.com/o/r.git"},
	} {
		if got := MaskText(tt.in); got != tt.want {
			t.Errorf("MaskText(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
