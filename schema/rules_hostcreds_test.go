package schema

import (
	"strings"
	"testing"
)

func TestCredentialName(t *testing.T) {
	for _, n := range []string{"apiKey", "api_key", "x-api-key", "APIKey", "key", "token", "GITHUB_TOKEN",
		"accessToken", "accesstoken", "clientSecret", "password", "PASSWD", "auth", "Authorization",
		"authToken", "aws_access_key_id", "credentials", "Bearer"} {
		if !CredentialName(n) {
			t.Errorf("%s: not seen as a credential's name", n)
		}
	}
	for _, n := range []string{"keybinds", "hotkey", "monkey", "author", "max_tokens", "model", "baseURL",
		"tokenizer", "secretary", "theme", "autoupdate"} {
		if CredentialName(n) {
			t.Errorf("%s: seen as a credential's name", n)
		}
	}
}

func TestLooksRandom(t *testing.T) {
	for _, s := range []string{
		"ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
		"sk-ant-api03-Xk2m9QpL4vR7tY1wZ8nB3cD6fG0hJ5",
		"xoxb-1234567890-0987654321-aZ9bY8cX7dW6eV5f",
		"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"AIzaSyD3f8Kq2Lm9Xz1Vb7Nc5Rt0Yw4Ue6Ip",
	} {
		if !LooksRandom(s) {
			t.Errorf("%s: not seen as random", s)
		}
	}
	for _, s := range []string{
		"/home/me/.config/opencode/themes/nord.json",
		"~/projects/app-2024/src/main.go",
		"./node_modules/.bin/opencode",
		"/nix/store/0c8xkmxz4mx7gvq9fq4sbq4hw1pcx6jb-opencode-1.18.33",
		"anthropic/claude-sonnet-4-5-20250929",
		"claude-3-5-sonnet-20241022",
		"gemini-2.5-pro-preview-05-06",
		"openai/gpt-4o-mini-2024-07-18",
		"550e8400-e29b-41d4-a716-446655440000",
		"experimentalFeatureFlagEnabled",
		"https://api.example.com/v1/chat/completions",
		"https://opencode.ai/config.json",
		"2025-09-29T12:00:00Z",
		"short1a2b3c",
	} {
		if LooksRandom(s) {
			t.Errorf("%s: seen as random", s)
		}
	}
}

const settingsJSONC = `{
  // my settings
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5-20250929",
  "keybinds": {"leader": "ctrl+x"},
  "provider": {
    "anthropic": {"options": {"apiKey": "canary-name-1"}},
    "corp": {"options": {"baseURL": "https://me:canary-pass-2@llm.corp.example/v1", "timeout": 600}},
    "ok": {"options": {"apiKey": "{env:OK_KEY}", "baseURL": "https://llm.example.com/v1"}}
  },
  "mcp": {
    "gh": {"type": "local", "command": ["gh-mcp", "--token", "Zq8Lp3Xw9Rt6Yu2Io5Pa7Sd1Fg4Hj0Kl"],
           "environment": {"GITHUB_TOKEN": "canary-env-3", "HOME_DIR": "/home/me"}},
    "exa": {"url": "https://mcp.exa.ai/mcp", "headers": {"Authorization": "Bearer canary-4"}}
  },
  "instructions": ["/home/me/notes/style.md"],
}`

func TestCredentialsInJSON(t *testing.T) {
	root, found := FindCredentials("opencode.jsonc", []byte(settingsJSONC))
	if root == nil {
		t.Fatal("not parsed as JSON")
	}
	got := map[string]string{}
	for _, c := range found {
		got[c.Where] = c.Why
		if strings.Contains(c.Where+c.Why, "canary") {
			t.Errorf("a finding shows the value: %+v", c)
		}
	}
	want := map[string]string{
		"$.provider.anthropic.options.apiKey": whyName,
		"$.provider.corp.options.baseURL":     whyUserinfo,
		"$.mcp.gh.command[2]":                 whyRandom,
		"$.mcp.gh.environment.GITHUB_TOKEN":   whyName,
		"$.mcp.exa.headers.Authorization":     whyName,
	}
	for w, why := range want {
		if got[w] != why {
			t.Errorf("%s: got %q, want %q", w, got[w], why)
		}
	}
	if len(got) != len(want) {
		t.Errorf("found %v, want only %v", got, want)
	}
	for _, c := range found {
		if c.Where == "$.provider.corp.options.baseURL" {
			s := string(c.Lit.Value.(interface{ String() string }).String())
			if s[c.Start:c.End] != "canary-pass-2" {
				t.Errorf("the userinfo span is %q", s[c.Start:c.End])
			}
		}
	}
}

func TestCredentialsInText(t *testing.T) {
	md := "---\ndescription: deploy\ntoken: \"ghp_canary\"\nmodel: anthropic/claude-sonnet-4-5\napi_key: ${DEPLOY_KEY}\n---\n" +
		"Password: never print it.\nClone https://bob:canary@git.example.com/x and use 9fK2mQ7xL4pR8tW1zY6nB3vC.\n"
	found := CredentialsInText([]byte(md), true)
	var got []string
	for _, c := range found {
		got = append(got, c.Where+": "+c.Why)
	}
	want := []string{
		"line 3: " + whyName + " (token)",
		"line 8: " + whyUserinfo,
		"line 8: " + whyRandom,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(CredentialsInText([]byte("Password: hunter22\n"), false)); n != 1 {
		t.Errorf("a YAML line with a password: %d findings, want 1", n)
	}
}

func TestCredentialFields(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		want             []string // Where of each finding
	}{
		{"json literal key", "a.json", "{\n  \"provider\": {\"x\": {\"options\": {\"apiKey\": \"sk-ant-0123456789abcdef\"}}}\n}", []string{"$.provider.x.options.apiKey"}},
		{"short password", "a.json", `{"db": {"password": "hunter2"}}`, []string{"$.db.password"}},
		{"toml token", "a.toml", "[auth]\ntoken = 'ghp_abcdefghijklmnop'\n", []string{"line 2"}},
		{"yaml password", "a.yaml", "db:\n  password: \"hunter2hunter2\"\n", []string{"line 2"}},
		{"nested any depth", "a.json", `{"a": [{"b": {"c": {"Secret": "s3cr3t-value"}}}]}`, []string{"$.a[0].b.c.Secret"}},
		{"env reference", "a.json", `{"apiKey": "{env:OPENCODE_API_KEY}"}`, nil},
		{"file reference", "a.json", `{"apiKey": "{file:~/.keys/x}"}`, nil},
		{"dollar reference", "a.toml", `api_key = "${OPENAI_API_KEY}"`, nil},
		{"variable name", "a.json", `{"apiKey": "ANTHROPIC_API_KEY"}`, nil},
		{"command", "a.json", `{"apiKey": "!pass show anthropic"}`, nil},
		{"placeholder or mode", "a.json", `{"token": "xxx", "auth": "oauth", "authType": "bearer"}`, nil},
		{"env_key names a variable", "a.toml", `env_key = "OPENAI_API_KEY"`, nil},
		{"other keys", "a.json", `{"model": "anthropic/claude-sonnet-4-5", "theme": "system-default", "keybinds": {"leader": "ctrl+x"}, "max_tokens": 4096}`, nil},
		{"not JSON after all", "a.json", "{\"token\": \"abcdefgh12\"", []string{"line 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, found := FindCredentials(tc.file, []byte(tc.data))
			var got []string
			for _, c := range found {
				got = append(got, c.Where)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("found %v, want %v", got, tc.want)
			}
		})
	}
}
