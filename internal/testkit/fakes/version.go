package fakes

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/schema"
)

// VersionEnv is the msb release the stand-in speaks (default 0.7.2, the
// real one CI runs): `msb --version` says it, and create accepts and
// rejects the config keys that release does (schema.VersionedKeys, judged
// by host's table of releases).
const VersionEnv = "ASB_FAKE_MSB_VERSION"

func fakeVersion() string {
	if v := os.Getenv(VersionEnv); v != "" {
		return v
	}
	return "0.7.2"
}

func (e *env) msbVersion() error {
	_, err := fmt.Fprintf(e.stdout, "msb %s\n", fakeVersion())
	return err
}

// judgeKeys fails as that release of msb does on a key it lacks.
func judgeKeys(file, path, what string, raw []byte) error {
	caps, err := host.CapsOf(fakeVersion())
	if err != nil {
		return err
	}
	if lacked := schema.LackedKeys(file, raw, caps.AtLeast); len(lacked) > 0 {
		return fail("error: invalid %s %s: %s", what, path, lacked[0].Rejection)
	}
	return nil
}

// readConf reads one --conf file as msb does: its release's keys, and no
// other (an unknown key fails).
func readConf(conf string) (schema.Sandbox, []byte, error) {
	var sb schema.Sandbox
	raw, err := os.ReadFile(conf)
	if err != nil {
		return sb, nil, fail("error: cannot read config %s", conf)
	}
	if err := judgeKeys(schema.SandboxFile, conf, "sandbox configuration", raw); err != nil {
		return sb, nil, err
	}
	known, err := schema.StripVersioned(schema.SandboxFile, raw)
	if err != nil {
		return sb, nil, fail("error: invalid sandbox configuration %s: %v", conf, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(known))
	dec.KnownFields(true)
	if err := dec.Decode(&sb); err != nil {
		return sb, nil, fail("error: invalid sandbox configuration %s: %v", conf, err)
	}
	return sb, raw, nil
}
