package schema

import "testing"

func TestLiteralCredential(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
		key        string
	}{
		{"json literal key", "{\n  \"provider\": {\"x\": {\"options\": {\"apiKey\": \"sk-ant-0123456789abcdef\"}}}\n}", 2, "apiKey"},
		{"toml token", "[auth]\ntoken = 'ghp_abcdefghijklmnop'\n", 2, "token"},
		{"yaml password", "db:\n  password: \"hunter2hunter2\"\n", 2, "password"},
		{"env reference", `{"apiKey": "{env:OPENCODE_API_KEY}"}`, 0, ""},
		{"dollar reference", `api_key = "${OPENAI_API_KEY}"`, 0, ""},
		{"variable name", `{"apiKey": "ANTHROPIC_API_KEY"}`, 0, ""},
		{"command", `{"apiKey": "!pass show anthropic"}`, 0, ""},
		{"short placeholder", `{"token": "xxx"}`, 0, ""},
		{"other keys", `{"model": "anthropic/claude-sonnet-4-5", "theme": "system-default"}`, 0, ""},
		{"env_key names a variable", `env_key = "OPENAI_API_KEY"`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, key, found := LiteralCredential([]byte(tc.data))
			if found != (tc.line > 0) || line != tc.line || key != tc.key {
				t.Errorf("LiteralCredential = %d, %q, %v; want line %d key %q", line, key, found, tc.line, tc.key)
			}
		})
	}
}
