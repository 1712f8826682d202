package schema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// Every image a build of the Dockerfile may pull, as "LINE VIA REF".
func TestBaseImages(t *testing.T) {
	for _, c := range []struct {
		name, df string
		want     []string
	}{
		{"asb's own", "ARG BASE_IMAGE=debian:trixie-slim\nFROM ${BASE_IMAGE}\nCOPY certs/ /c/\n", []string{"2 FROM debian:trixie-slim"}},
		{"last default wins", "ARG B=debian:trixie\nARG B=registry.example.com/evil:1\nFROM ${B}\n", []string{"3 FROM registry.example.com/evil:1"}},
		{"a stage's ARG is not FROM's", "ARG B=debian\nFROM $B AS a\nARG B=evil.example/x:1\nFROM ${B}\n", []string{"2 FROM debian", "4 FROM debian"}},
		{"ARG again without default", "ARG B=debian\nARG B\nFROM ${B}\n", []string{"3 FROM ${B}"}},
		{"ARG without default", "ARG X\nFROM --platform=linux/amd64 $X\n", []string{"2 FROM $X"}},
		{"ARGs on one line, from ARGs", "ARG R=registry.example.com T=1\nARG I=\"${R}/evil:$T\"\nFROM $I\n", []string{"3 FROM registry.example.com/evil:1"}},
		{"other forms stay", "FROM ${NOPE:-evil.example/x}\n", []string{"1 FROM ${NOPE:-evil.example/x}"}},
		{"stages and scratch", "FROM debian AS Build\nFROM build\nCOPY --from=BUILD /a /a\nCOPY --from=0 /a /a\nFROM scratch\n", []string{"1 FROM debian"}},
		{"platform flag", "FROM --platform=$BUILDPLATFORM debian:trixie AS b\n", []string{"1 FROM debian:trixie"}},
		{"COPY --from an image", "FROM debian\nCOPY --from=registry.example.com/evil:3 /x /x\n", []string{"1 FROM debian", "2 COPY --from registry.example.com/evil:3"}},
		{"COPY --from itself", "FROM debian AS a\nCOPY --from=a /x /x\n", []string{"1 FROM debian", "2 COPY --from a"}},
		{"COPY --from a later index", "FROM debian\nCOPY --from=1 /x /x\n", []string{"1 FROM debian", "2 COPY --from 1"}},
		{"COPY --from a $", "FROM debian\nARG S=build\nCOPY --from=${S} /x /x\n", []string{"1 FROM debian", "3 COPY --from ${S}"}},
		{"ADD --from, quoted, lowercase", "FROM debian\nadd --from=\"evil.example/x:1\" /a /b\n", []string{"1 FROM debian", "2 ADD --from evil.example/x:1"}},
		{"RUN --mount from", "FROM debian\nRUN --mount=type=bind,from=evil.example/m:1,target=/m true\n", []string{"1 FROM debian", "2 RUN --mount evil.example/m:1"}},
		{"RUN --mount quoted field", "FROM debian\nRUN --mount=type=cache,\"from=evil.example/q:1\",target=/c --mount=type=bind,FROM=evil.example/u:1 true\n",
			[]string{"1 FROM debian", "2 RUN --mount evil.example/q:1", "2 RUN --mount evil.example/u:1"}},
		{"RUN --mount from a stage", "FROM debian AS b\nFROM debian\nRUN --mount=from=b,target=/b true\n", []string{"1 FROM debian", "2 FROM debian"}},
		{"a flag after the command is none", "FROM debian\nRUN echo --from=evil.example/x:1\n", []string{"1 FROM debian"}},
		{"continued, with a comment", "FROM debian\nCOPY \\\n  # why\n  --from=evil.example/c:1 /a /b\n", []string{"1 FROM debian", "4 COPY --from evil.example/c:1"}},
		{"a word continued", "FROM debian\nCOPY --fr\\\nom=evil.example/s:1 /a /b\n", []string{"1 FROM debian", "2 COPY --from evil.example/s:1"}},
		{"escape directive", "# escape=`\nFROM debian\nCOPY `\n--from=evil.example/e:1 /a /b\n", []string{"2 FROM debian", "4 COPY --from evil.example/e:1"}},
		{"ONBUILD", "FROM debian\nONBUILD COPY --from=evil.example/o:1 /a /b\n", []string{"1 FROM debian", "2 COPY --from evil.example/o:1"}},
		{"heredoc lines, as old buildah reads them", "FROM debian\nRUN <<EOF\nFROM evil.example/h:1\nEOF\n", []string{"1 FROM debian", "3 FROM evil.example/h:1"}},
		{"a stage only a heredoc names", "FROM debian\nRUN <<EOF\nFROM debian AS x\nEOF\nCOPY --from=x /a /b\n", []string{"1 FROM debian", "3 FROM debian", "5 COPY --from x"}},
		{"a heredoc's end that continues", "FROM debian\nRUN <<'E\\'\nE\\\nCOPY --from=evil.example/t:1 /a /b\n", []string{"1 FROM debian", "4 COPY --from evil.example/t:1"}},
		{"syntax directive", "# syntax=registry.example.com/evil/frontend:4\nFROM debian\n", []string{"1 # syntax registry.example.com/evil/frontend:4", "2 FROM debian"}},
		{"syntax after a shebang, //", "#!/usr/bin/env build\n//syntax = evil.example/f:1\nFROM debian\n", []string{"2 # syntax evil.example/f:1", "3 FROM debian"}},
		{"BOM and CRLF", "\ufeffARG B=debian\r\nFROM $B\r\n", []string{"2 FROM debian"}},
	} {
		var got []string
		for _, img := range schema.BaseImages(c.df) {
			got = append(got, fmt.Sprintf("%d %s %s", img.Line, img.Via, img.Ref))
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: BaseImages =\n  %s\nwant\n  %s", c.name, strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
		}
	}
}

// validate refuses what of toolchain/ asb cannot judge, policy or none;
// the policy's door (CheckPolicy) refuses it and judges every image when
// images_from is set.
func TestCheckToolchain(t *testing.T) {
	layer, probs := schema.ParsePolicy("policy.yaml", []byte("images_from: [docker.io/library/debian]\n"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	pol := &schema.Policy{Layers: []*schema.PolicyLayer{layer}}
	const df = "ARG BASE_IMAGE=debian:trixie-slim\nFROM ${BASE_IMAGE}\n"
	for _, c := range []struct {
		name   string
		files  map[string]string
		always []string // CheckDir without a policy
		policy []string // CheckPolicy with images_from
	}{
		{"good", map[string]string{"toolchain/Dockerfile": df}, nil, nil},
		// A syntax directive's frontend is an image like the others: no
		// policy, no problem; images_from judges it.
		{"syntax", map[string]string{"toolchain/Dockerfile": "# syntax=docker/dockerfile:1\n" + df},
			nil, []string{`toolchain/Dockerfile:1: error: the image docker/dockerfile:1 is not allowed by your policy policy.yaml:1`}},
		{"JSON", map[string]string{"toolchain/Dockerfile": `{"syntax": "evil.example/f:1"}`},
			[]string{"toolchain/Dockerfile:1: error: not supported by asb: a Dockerfile in JSON form"},
			[]string{"toolchain/Dockerfile:1: error: not supported by asb: a Dockerfile in JSON form"}},
		{"Containerfile", map[string]string{"toolchain/Dockerfile": df, "toolchain/Containerfile": "FROM evil.example/x:1\n"},
			[]string{"toolchain/Containerfile: error: not supported by asb: toolchain/Containerfile, because a builder may build it instead"},
			[]string{"toolchain/Containerfile: error: not supported by asb"}},
		{"dockerfile", map[string]string{"toolchain/dockerfile": "FROM evil.example/x:1\n"},
			[]string{"toolchain/dockerfile: error: not supported by asb: toolchain/dockerfile"},
			[]string{"toolchain/dockerfile: error: not supported by asb"}},
		{"images", map[string]string{"toolchain/Dockerfile": df + "ARG BASE_IMAGE=x\nCOPY --from=evil.example/c:1 /a /b\nRUN --mount=from=debian:trixie,target=/m true\n"},
			nil, []string{"toolchain/Dockerfile:4: error: the image evil.example/c:1 is not allowed by your policy policy.yaml:1"}},
		{"ARG twice", map[string]string{"toolchain/Dockerfile": "ARG BASE_IMAGE=debian:trixie-slim\nARG BASE_IMAGE=evil.example/x:1\nFROM ${BASE_IMAGE}\n"},
			nil, []string{"toolchain/Dockerfile:3: error: the image evil.example/x:1 is not allowed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.files["Taskfile.yml"] = "version: '3'\nvars:\n  IMAGE: p:opencode-latest\n"
			dir := folder(t, c.files)
			assertProblems(t, schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit}), c.always...)
			assertProblems(t, schema.CheckPolicy(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Policy: pol}), c.policy...)
			// With the policy, validate reports each problem once.
			all := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit, Policy: pol})
			want := len(c.policy)
			if len(c.always) > len(c.policy) {
				want = len(c.always)
			}
			if len(all) != want {
				t.Errorf("CheckDir with the policy: %d problems, want %d: %v", len(all), want, all)
			}
		})
	}
}
