// Package imagecmd is `asb image`: what the Taskfile's image tasks need
// from asb — this machine's extra CA certificates copied into the build
// context, and a Debian base image built from packages where none can be
// pulled.
package imagecmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb image`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Builder []string // base: the builder's argv, after --
	Force   bool     // base: build even when the image exists
	IfLocal bool     // base: do nothing unless the base is a localhost/debian one
}

// NewCmd returns `asb image`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "image <command>",
		Short: "Prepare the toolchain image's build: host CA certificates, a base without a registry",
		Long: `The steps of the Taskfile's image tasks that asb does itself. You rarely run
them by hand: asb task image:build runs 'asb image certs' first, and
'asb image base --if-local' when the base image is a local one, then the
build through 'asb image build' (which falls back to a local Debian base
when the registry's cannot be pulled); asb task image:base runs
'asb image base'.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(newCertsCmd(opts), newBaseCmd(opts), newBuildCmd(opts))
	return cmd
}

func newCertsCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "certs",
		Short: "Copy this machine's extra CA certificates into toolchain/certs/",
		Long: `Copy this machine's extra CA certificates (those its administrator added to
the trust store, such as a TLS-inspecting proxy's: /usr/local/share/ca-certificates/,
/etc/pki/ca-trust/source/anchors/ and the like) into toolchain/certs/ as
host-FINGERPRINT.crt, and remove the host-*.crt files of CAs no longer there.
The image build installs them with update-ca-certificates, so apt, npm and
the agent work behind such a proxy. They are per machine: .gitignore keeps
them out of the repository. Certificates are public; no key is copied.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCerts(cmd.Context(), opts) },
	}
}

func newBaseCmd(opts *Options) *cobra.Command {
	base := &cobra.Command{
		Use:   "base [--force] [--if-local] -- BUILDER [FLAG...]",
		Short: "Build the Dockerfile's base image from Debian's packages (no registry needed)",
		Long: `Build the base image toolchain/Dockerfile names (ARG BASE_IMAGE) from Debian's
packages with mmdebstrap, and import it into BUILDER (docker or podman, with
its global flags): for machines that cannot pull from a registry. The name
must be ` + schema.LocalBaseRepo + `:SUITE or ` + schema.LocalBaseRepo + `:SUITE-slim; the -slim
variant leaves out manuals, docs and locales. The mirror is the host's apt
mirror (else deb.debian.org); the suite's updates and security archives are
included. An image that exists already is left alone unless --force.`,
		Example: `  asb init --agent opencode --base-image localhost/debian:trixie-slim myproj
  cd myproj && asb task image:base`,
		Args: cmdutil.MinimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return &cmdutil.UsageError{Err: fmt.Errorf("put the builder after --, e.g. asb image base -- podman")}
			}
			opts.Builder = args
			return runBase(cmd.Context(), opts)
		},
	}
	base.Flags().BoolVar(&opts.Force, "force", false, "build it again even if the builder has it")
	base.Flags().BoolVar(&opts.IfLocal, "if-local", false, "do nothing when the base is a registry's image (image:build runs it so)")
	return base
}

func runCerts(ctx context.Context, o *Options) error {
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb image certs")
	if err != nil {
		return err
	}
	defer release()
	return outer.SyncHostCerts(f.Dir, o.Factory.IO.ErrOut)
}

func runBase(ctx context.Context, o *Options) error {
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	ref := f.DockerArg("BASE_IMAGE")
	if ref == "" && o.IfLocal {
		return nil // a Dockerfile of the user's own, with its FROM as it is
	}
	if ref == "" {
		return fmt.Errorf("%s has no single ARG BASE_IMAGE=… line: add one, e.g. ARG BASE_IMAGE=%s:trixie-slim", outer.DockerfileFile, schema.LocalBaseRepo)
	}
	if o.IfLocal && !schema.IsLocalBase(ref) {
		return nil // a registry's image: the build pulls it
	}
	suite, re := schema.LocalDebianBase(ref)
	if re != nil {
		return fmt.Errorf("%s: ARG BASE_IMAGE %w", outer.DockerfileFile, re)
	}
	b := runner.BaseImage{Builder: o.Builder, Ref: ref, Suite: suite, Slim: strings.HasSuffix(ref, "-slim"),
		SourceDateEpoch: baseEpoch, Stderr: o.Factory.IO.ErrOut}
	if !o.Force && b.Exists(ctx) {
		return nil
	}
	fmt.Fprintf(o.Factory.IO.ErrOut, "asb: building the base image %s from Debian's %s packages (mmdebstrap; about half a minute)\n", ref, suite)
	if err := b.Build(ctx); err != nil {
		return err
	}
	fmt.Fprintf(o.Factory.IO.ErrOut, "asb: built %s\n", ref)
	return nil
}

// baseEpoch dates every file of a base image, so that one suite's packages
// give the same layer on every machine (msb stores a layer once).
const baseEpoch = "1700000000"
