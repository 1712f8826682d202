package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agents-sandbox/asb/host"
)

// Running lists msb's running sandboxes (msb ls --running) with the CPUs
// and memory each one's config asks for (msb inspect): what host.CanHold
// counts as held.
func (m MSB) Running(ctx context.Context) ([]host.Held, error) {
	out, err := Output(ctx, "", m.bin(), "ls", "--running", "--quiet")
	if err != nil {
		return nil, err
	}
	var held []host.Held
	for _, name := range strings.Fields(string(out)) {
		in, err := m.Inspect(ctx, name)
		if err != nil {
			continue // it ended meanwhile
		}
		held = append(held, host.Held{Name: name, CPUs: in.Config.Resources.CPUs, MemoryMiB: in.Config.Resources.MemoryMiB})
	}
	return held, nil
}

// Inspected is what asb reads of `msb inspect NAME --format json`.
type Inspected struct {
	Status string `json:"status"`
	Config struct {
		Resources struct {
			CPUs      int   `json:"cpus"`
			MemoryMiB int64 `json:"memory_mib"`
		} `json:"resources"`
		Mounts []struct {
			Type  string `json:"type"`
			Host  string `json:"host"`
			Guest string `json:"guest"`
		} `json:"mounts"`
	} `json:"config"`
}

// Inspect reads msb's record of sandbox name; found is false when msb has
// none.
func (m MSB) Inspect(ctx context.Context, name string) (Inspected, error) {
	var in Inspected
	out, err := Output(ctx, "", m.bin(), "inspect", name, "--format", "json")
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(out, &in); err != nil {
		return in, fmt.Errorf("msb inspect %s --format json: %w", name, err)
	}
	return in, nil
}

// RemoveVM removes sandbox name, stopping it first; one msb has not is no
// error.
func (m MSB) RemoveVM(ctx context.Context, name string) error {
	return m.quietMissing(ctx, "remove", "--force", "--quiet", name)
}

// RemoveVolume removes volume name; one msb has not is no error.
func (m MSB) RemoveVolume(ctx context.Context, name string) error {
	return m.quietMissing(ctx, "volume", "rm", "--quiet", name)
}

func (m MSB) quietMissing(ctx context.Context, args ...string) error {
	_, err := Output(ctx, "", m.bin(), args...)
	var te *ToolError
	if errors.As(err, &te) && te.Code > 0 && strings.Contains(te.Output, "not found") {
		return nil
	}
	return err
}
