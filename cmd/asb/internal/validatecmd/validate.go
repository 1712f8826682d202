// Package validatecmd is `asb validate`.
package validatecmd

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
)

// NewCmd returns `asb validate`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "validate",
		Short:  "(not implemented yet)",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("asb validate is not implemented yet")
		},
	}
}
