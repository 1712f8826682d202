package schema

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRecordedOrigin(t *testing.T) {
	ok := []string{
		"https://github.com/me/app.git",
		"https://gitlab.example.com:8443/team/app",
		"ssh://git@github.com/me/app.git",
		"ssh://git@[::1]:2222/srv/app.git",
		"git+ssh://git@example.com/app",
		"git@github.com:me/app.git",
		"example.com:team/app.git",
		"git://example.com/app.git",
	}
	for _, u := range ok {
		if err := CheckRecordedOrigin(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	bad := map[string]string{
		"/home/me/.password-store":               "is a local path",
		"../secrets":                             "is a local path",
		"repo":                                   "is a local path",
		"file:///home/me/private.git":            "is a local path",
		"FILE:///home/me/private.git":            "is a local path",
		"ext::sh -c touch% /tmp/pwned":           "names a git remote helper (ext::)",
		"fd::3":                                  "names a git remote helper (fd::)",
		"/tmp/a::b":                              "holds '::'",
		"--upload-pack=touch /tmp/pwned":         "starts with '-'",
		"-oProxyCommand=x:path":                  "starts with '-'",
		"ssh://-oProxyCommand=x/repo":            "host or user starting with '-'",
		"-u@host:path":                           "starts with '-'",
		"u@-host:path":                           "host or user starting with '-'",
		"http://example.com/app.git":             "plain http",
		"persistent-https://example.com/app.git": "persistent-https transport: not supported by asb",
		"https://me:hunter2@example.com/app.git": "holds a password",
		"https://ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5@github.com/me/app": "looks like a token",
		"https://example.com/a\x1b[2Jb":                                      "control character",
		"":                                                                   "is empty",
		"https:///app.git":                                                   "names no host",
	}
	for u, want := range bad {
		err := CheckRecordedOrigin(u)
		var oe *OriginError
		if !errors.As(err, &oe) {
			t.Errorf("%q: got %v, want an OriginError", u, err)
			continue
		}
		if !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "asb.yaml: workspace.url ") {
			t.Errorf("%q: %v\nwant it to say %q", u, err, want)
		}
		if oe.Fix == "" {
			t.Errorf("%q: no fix in %v", u, err)
		}
		for _, secret := range []string{"hunter2", "ghp_aB3dE5"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%q: the message shows the credential: %v", u, err)
			}
		}
	}
}

func TestCheckTypedOrigin(t *testing.T) {
	for u, want := range map[string]OriginKind{
		"/home/me/app":                  OriginLocal,
		"app":                           OriginLocal,
		"file:///srv/app.git":           OriginLocal,
		"https://github.com/me/app.git": OriginRemote,
		"git@github.com:me/app.git":     OriginRemote,
		"http://intranet/app.git":       OriginRemote,
	} {
		kind, err := CheckTypedOrigin(u)
		if err != nil || kind != want {
			t.Errorf("%s: got %v, %v; want %v", u, kind, err, want)
		}
	}
	for _, u := range []string{"ext::sh -c x", "-x", "https://u:p@h/r", "gcrypt::rsync://h/r"} {
		if _, err := CheckTypedOrigin(u); err == nil || !strings.HasPrefix(err.Error(), "--workspace ") {
			t.Errorf("%q: got %v, want a --workspace error", u, err)
		}
	}
}
