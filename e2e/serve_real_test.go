package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/serve"
)

// TestRealServePort checks that msb 0.7.2 takes the forward asb serve adds
// to msb create (asb msb-conf prints --port 127.0.0.1:HOST:GUEST) with the
// folder's sandbox.yaml, and records it bound to 127.0.0.1 only, as
// serve.Forwards reads it.
func TestRealServePort(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	testenv.KillMachinesAtCleanup(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	image := loadTinyImage(t, ctx, msb, env)
	rec := &serve.Record{Port: 41999, GuestPort: 4096}
	raw := createAndInspectRaw(t, ctx, msb, env, home, image, "asbserve", "network:\n  allow: [example.com]\n", nil, "--port", rec.Forward())
	var got struct {
		Config struct {
			Network struct {
				Ports []serve.Forward `json:"ports"`
			} `json:"network"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("msb inspect: %v\n%s", err, raw)
	}
	want := []serve.Forward{{HostBind: "127.0.0.1", HostPort: 41999, GuestPort: 4096, Protocol: "tcp"}}
	if !slices.Equal(got.Config.Network.Ports, want) {
		t.Fatalf("msb recorded the forwards %+v, want %+v", got.Config.Network.Ports, want)
	}
}
