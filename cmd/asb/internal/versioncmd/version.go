// Package versioncmd is `asb version`.
package versioncmd

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
)

// NewCmd returns `asb version`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print asb's version",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.IO.Out, "asb %s (%s, %s/%s)\n", f.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
