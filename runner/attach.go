package runner

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/proc"
)

// Attach runs argv (found on PATH) in dir with env as asb's child, with
// asb's terminal, and returns its exit code (128+N when signal N ended it,
// as a shell says). asb stays its parent, so that it can act once the
// child is done; meanwhile it is out of the way: SIGINT and SIGQUIT, which
// the terminal sends the whole foreground group, msb gets itself and asb
// ignores; SIGTERM and SIGHUP, sent to asb alone, asb passes on. Should asb
// die, the kernel sends the child SIGTERM.
//
// answers are first lines of standard error by which the child says it
// could not start at all (msb exec's "sandbox not found"): while what the
// child writes there could still become one, asb holds it back; answered
// reports that one was written, and then nothing of it was shown.
func Attach(argv, env []string, dir string, in io.Reader, out, errOut io.Writer, answers []string) (code int, answered bool, err error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 127, false, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: dir, Stdin: in, Stdout: out, Stderr: errOut, WaitDelay: time.Second}
	proc.EndWithParent(cmd)
	var watch *answerWatch
	var r *os.File
	if len(answers) > 0 {
		var w *os.File
		if r, w, err = os.Pipe(); err != nil {
			return 127, false, err
		}
		defer r.Close()
		watch = &answerWatch{w: errOut, answers: answers, held: true}
		cmd.Stderr = w
		defer w.Close()
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Pdeathsig follows the thread that started the child: keep this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return 127, false, err
	}
	var copied sync.WaitGroup
	if watch != nil {
		cmd.Stderr.(*os.File).Close() // the child's copy is its own now
		copied.Go(func() { _, _ = io.Copy(watch, r) })
	}
	done := make(chan struct{})
	go passOn(sigs, cmd.Process, done)
	werr := cmd.Wait()
	close(done)
	if watch != nil {
		// A process the child left behind may hold the pipe: what is
		// written by now is all asb waits for.
		_ = r.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		copied.Wait()
	}
	code = processCode(cmd.ProcessState)
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return code, false, werr
	}
	if watch != nil {
		answered = watch.matched && code == 1
		if !answered {
			watch.flush()
		}
	}
	return code, answered, nil
}

// passOn gives p the SIGTERMs and SIGHUPs asb gets, until done; SIGINT and
// SIGQUIT it drops (the terminal sent p its own).
func passOn(sigs <-chan os.Signal, p *os.Process, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				_ = p.Signal(s)
			}
		case <-done:
			return
		}
	}
}

func processCode(ps *os.ProcessState) int {
	if ps == nil {
		return 127
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// answerWatch passes what is written on to w, but holds it back while it
// could still be one of answers (bytes that begin one), and keeps it once
// it is one.
type answerWatch struct {
	w       io.Writer
	answers []string
	buf     []byte
	held    bool // the bytes so far begin an answer, or are one
	matched bool
}

// maxAnswer bounds what is held once an answer matched: msb's answer is a
// few lines; a longer text is the command's own and is shown.
const maxAnswer = 4 << 10

func (a *answerWatch) Write(p []byte) (int, error) {
	if !a.held {
		return a.w.Write(p)
	}
	a.buf = append(a.buf, p...)
	if a.matched && len(a.buf) <= maxAnswer {
		return len(p), nil
	}
	if !a.matched {
		text := plainText(a.buf)
		for _, ans := range a.answers {
			if bytes.HasPrefix(text, []byte(ans)) {
				a.matched = true
				return len(p), nil
			}
			if bytes.HasPrefix([]byte(ans), text) {
				return len(p), nil // it may still become this answer
			}
		}
	}
	a.matched = false
	return len(p), a.flush()
}

// plainText is b without its ANSI SGR sequences (ESC [ digits ; … m, the
// colours msb puts on "error:" at a terminal); one that b ends inside is
// left out too, until the next write completes it.
func plainText(b []byte) []byte {
	text := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			text = append(text, b[i])
			continue
		}
		j := i + 1
		if j < len(b) && b[j] == '[' {
			for j++; j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';'); j++ {
			}
		}
		switch {
		case j >= len(b):
			return text // the sequence goes on in the next write
		case b[j] == 'm' && j > i+1:
			i = j
		default:
			text = append(text, b[i]) // not a colour: compared as it is
		}
	}
	return text
}

// flush shows what was held, and passes everything on from now.
func (a *answerWatch) flush() error {
	a.held = false
	b := a.buf
	a.buf = nil
	if len(b) == 0 {
		return nil
	}
	_, err := a.w.Write(b)
	return err
}
