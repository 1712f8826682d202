package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/agents-sandbox/asb/host"
)

// CheckFormat accepts the --format of asb ls, df and prune: "" (a table)
// or json.
func CheckFormat(format string) error {
	if format == "" || format == "json" {
		return nil
	}
	return &UsageError{Err: fmt.Errorf("--format %q: asb knows only --format json (or no --format, for a table)", format)}
}

// MSBError explains a failed msb listing: msb missing is the one message
// for it; anything else says what asb was doing.
func MSBError(doing string, err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return host.ErrNoMSB
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// InstalledMSB is the installed msb's row of host/msbversion.go's table
// (detect nil: host.DetectMSB on the msb on PATH).
func InstalledMSB(ctx context.Context, detect func(context.Context) (host.MSBCaps, error)) (host.MSBCaps, error) {
	if detect != nil {
		return detect(ctx)
	}
	_, caps, err := host.DetectMSB(ctx, host.SystemHost{})
	return caps, err
}
