// Package networkcmd is `asb network`.
package networkcmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
)

// NewCmd returns `asb network`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "network",
		Short:  "(not implemented yet)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("asb network is not implemented yet")
		},
	}
}
