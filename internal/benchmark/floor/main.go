// Command floor is the floor asb's start is held against: a cobra binary
// with one subcommand, built with the same Go and cobra as asb.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "floor", SilenceUsage: true}
	root.AddCommand(&cobra.Command{Use: "version", Run: func(*cobra.Command, []string) { fmt.Println("floor 0") }})
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
