// Package boundarycmd is `asb boundary`.
package boundarycmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
)

// NewCmd returns `asb boundary`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "boundary",
		Short:  "(not implemented yet)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("asb boundary is not implemented yet")
		},
	}
}
