package imagecmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

func newBuildCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "build -- BUILDER [FLAG...] build [BUILD-FLAG...] CONTEXT",
		Short: "Run the image build; where the base cannot be pulled, build it from Debian's packages instead",
		Long: `Run the builder's build as given (image:build runs it). When the build fails
and the base image toolchain/Dockerfile names (ARG BASE_IMAGE) is a registry's
Debian image that the builder still does not have, no registry could be
reached: asb says so in one line instead of the builder's pull error, builds
` + schema.LocalBaseRepo + `:SUITE[-slim] from Debian's packages (asking first on a
terminal) and runs the build again on it. Any other failure is the
builder's, printed as it gave it.`,
		Args: cmdutil.MinimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 || !slices.Contains(args, "build") {
				return &cmdutil.UsageError{Err: fmt.Errorf("put the builder's command after --, e.g. asb image build -- podman build --tag T toolchain")}
			}
			return runBuild(cmd.Context(), opts, args)
		},
	}
}

// runBuild runs argv; on a failure caused by an unpullable Debian base it
// builds the local base and runs argv again with it.
func runBuild(ctx context.Context, o *Options, argv []string) error {
	errOut := o.Factory.IO.ErrOut
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	if probs := schema.CheckToolchain(f.Dir); len(probs) > 0 {
		return fmt.Errorf("refused, nothing built: %s", probs[0])
	}
	var stderr bytes.Buffer
	code, err := runTool(ctx, f.Dir, argv, o.Factory.IO.Out, &stderr)
	if err != nil {
		return err
	}
	if code == 0 {
		_, err := errOut.Write(stderr.Bytes())
		return err
	}
	builder := argv[:slices.Index(argv, "build")]
	ref, local := fallbackBase(ctx, f.DockerArg("BASE_IMAGE"), builder, stderr.String())
	if local == "" {
		_, _ = errOut.Write(stderr.Bytes())
		return &cmdutil.SilentError{Code: code}
	}
	fmt.Fprintf(errOut, "asb: the base image %s cannot be pulled (no registry reachable from here)\n", ref)
	if interactive(o.Factory.IO.In) {
		fmt.Fprintf(errOut, "Build %s from Debian's packages instead (about half a minute)? [Y/n] ", local)
		line, _ := bufio.NewReader(o.Factory.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "" && a != "y" && a != "yes" {
			return fmt.Errorf("no base image to build on: run asb task image:base -- after setting ARG BASE_IMAGE=%s in %s, or make %s pullable", local, outer.DockerfileFile, ref)
		}
	}
	if err := ensureBase(ctx, o, builder, local); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "asb: building on %s (to skip the registry from now on: ARG BASE_IMAGE=%s in %s)\n", local, local, outer.DockerfileFile)
	at := slices.Index(argv, "build") + 1
	again := slices.Concat(argv[:at], []string{"--build-arg", "BASE_IMAGE=" + local}, argv[at:])
	code, err = runTool(ctx, f.Dir, again, o.Factory.IO.Out, errOut)
	if err != nil {
		return err
	}
	if code != 0 {
		return &cmdutil.SilentError{Code: code}
	}
	return nil
}

// fallbackBase returns the local base to build in place of ref, or ""
// when the failure is not an unpullable Debian base: the base is local
// already or not Debian's, the builder's error names neither a registry nor
// the base, or the builder has the base (so the build failed for another
// reason).
func fallbackBase(ctx context.Context, ref string, builder []string, stderr string) (string, string) {
	local := LocalFor(ref)
	if local == "" || !(strings.Contains(stderr, "registry") || strings.Contains(stderr, ref)) {
		return ref, ""
	}
	inspect := slices.Concat(builder, []string{"image", "inspect", ref})
	if code, err := runTool(ctx, "", inspect, io.Discard, io.Discard); err == nil && code == 0 {
		return ref, ""
	}
	return ref, local
}

// LocalFor maps a registry's Debian image (debian:SUITE[-slim], with or
// without docker.io/library/) to the base asb builds in its place; "" for
// any other image.
func LocalFor(ref string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(ref, "docker.io/"), "library/")
	tag, ok := strings.CutPrefix(name, "debian:")
	if !ok {
		return ""
	}
	local := schema.LocalBaseRepo + ":" + tag
	if _, re := schema.LocalDebianBase(local); re != nil {
		return ""
	}
	return local
}

func ensureBase(ctx context.Context, o *Options, builder []string, ref string) error {
	suite, re := schema.LocalDebianBase(ref)
	if re != nil {
		return re
	}
	b := runner.BaseImage{Builder: builder, Ref: ref, Suite: suite, Slim: strings.HasSuffix(ref, "-slim"),
		SourceDateEpoch: baseEpoch, Stderr: o.Factory.IO.ErrOut}
	if b.Exists(ctx) {
		return nil
	}
	fmt.Fprintf(o.Factory.IO.ErrOut, "asb: building the base image %s from Debian's %s packages (mmdebstrap; about half a minute)\n", ref, suite)
	return b.Build(ctx)
}

// runTool runs argv and returns its exit code; err only when it could not
// run at all.
func runTool(ctx context.Context, dir string, argv []string, stdout, stderr io.Writer) (int, error) {
	c := proc.Command(ctx, argv[0], argv[1:]...)
	c.Dir, c.Stdout, c.Stderr = dir, stdout, stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return 0, nil
}

// interactive reports whether in is a terminal a question can be asked on.
func interactive(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
