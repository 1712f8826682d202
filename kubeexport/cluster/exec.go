package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/runner"
)

// stream runs cmd in container of pod by the API's exec (websocket, or
// SPDY from an older API server), with the given streams.
func (c *Client) stream(ctx context.Context, pod, container string, cmd []string, opts remotecommand.StreamOptions) error {
	req := c.Core.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd,
			Stdin: opts.Stdin != nil, Stdout: opts.Stdout != nil, Stderr: opts.Stderr != nil, TTY: opts.Tty}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", req.URL().String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL())
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	if err != nil {
		return err
	}
	return exec.StreamWithContext(ctx, opts)
}

// exec runs the agent's command in the agent container, on the user's
// terminal when there is one (raw, resized with it), as asb task agent
// runs it in the VM.
func (c *Client) exec(ctx context.Context, pod string, cmd []string, std kubeexport.IO) error {
	opts := remotecommand.StreamOptions{Stdin: std.In, Stdout: std.Out}
	fd := int(std.In.Fd())
	if !term.IsTerminal(fd) {
		opts.Stderr = std.Err
		return c.stream(ctx, pod, kubeexport.AgentContainer, cmd, opts)
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return fmt.Errorf("the terminal: %w", err)
	}
	defer func() { _ = term.Restore(fd, old) }()
	opts.Tty = true
	opts.TerminalSizeQueue = newSizeQueue(ctx, fd)
	return c.stream(ctx, pod, kubeexport.AgentContainer, cmd, opts)
}

// sizeQueue hands the terminal's size to the exec, at start and on each
// SIGWINCH.
type sizeQueue chan remotecommand.TerminalSize

func newSizeQueue(ctx context.Context, fd int) sizeQueue {
	q := make(sizeQueue, 1)
	win := make(chan os.Signal, 1)
	signal.Notify(win, syscall.SIGWINCH)
	send := func() {
		if w, h, err := term.GetSize(fd); err == nil {
			select {
			case q <- remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}:
			default:
			}
		}
	}
	send()
	go func() {
		defer signal.Stop(win)
		for {
			select {
			case <-ctx.Done():
				close(q)
				return
			case <-win:
				send()
			}
		}
	}()
	return q
}

// Next is the next size, nil once the exec is over.
func (q sizeQueue) Next() *remotecommand.TerminalSize {
	s, ok := <-q
	if !ok {
		return nil
	}
	return &s
}

// deliver clones the recorded origin on this machine (as asb init
// --workspace does, with the user's own credentials), bundles it, and
// streams the bundle into the pod's waiting init container, which checks
// it out: the pod itself reaches no git host.
func (c *Client) deliver(ctx context.Context, pod string, src *kubeexport.Source, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "asb-kube-workspace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(log, "cloning %s to deliver the workspace\n", src.Workspace.URL)
	git := runner.Git{}
	repo := filepath.Join(tmp, "workspace")
	if _, err := git.CloneAt(ctx, src.Workspace, repo); err != nil {
		return err
	}
	bundle := filepath.Join(tmp, "workspace.bundle")
	if err := git.Bundle(ctx, repo, bundle); err != nil {
		return err
	}
	f, err := os.Open(bundle)
	if err != nil {
		return err
	}
	defer f.Close()
	b := kubeexport.WorkspaceBundle
	script := `cat > "$0.part" && mv "$0.part" "$0"`
	if err := c.stream(ctx, pod, kubeexport.InitContainer, []string{"sh", "-c", script, b}, remotecommand.StreamOptions{Stdin: f, Stderr: log}); err != nil {
		return fmt.Errorf("deliver the workspace into %s: %w", pod, err)
	}
	fmt.Fprintln(log, "workspace delivered")
	return nil
}
