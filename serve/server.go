package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Server is the agent's server as a client on the host reaches it.
type Server struct {
	URL      string
	User     string
	Password string
	Health   string // path that answers 200 once the server is up
}

// WrongPasswordError is a server that answers but refuses the password.
type WrongPasswordError struct{ URL string }

func (e *WrongPasswordError) Error() string {
	return fmt.Sprintf("the server at %s refuses the password of %s in secrets.env: it was started with another one; stop it (asb task vm:stop) and run asb serve again", e.URL, PasswordVar)
}

// Request is a GET of path with the server's basic auth.
func (s Server) Request(ctx context.Context, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(s.User, s.Password)
	return req, nil
}

// Up reports whether the server answers its health path with this password.
func Up(ctx context.Context, s Server) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := s.Request(ctx, s.Health)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, nil // nothing listens (yet)
	}
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return false, &WrongPasswordError{URL: s.URL}
	case resp.StatusCode/100 == 2:
		return true, nil
	}
	return false, nil
}

// WaitUp polls up until the server answers, ctx ends or limit passes.
func WaitUp(ctx context.Context, s Server, up func(context.Context, Server) (bool, error), limit, every time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := up(ctx, s)
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the agent's server did not answer at %s within %s: see its log in the VM (asb task vm:exec -- cat /tmp/asb-serve.log)", s.URL, limit)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("waiting for the agent's server at %s", s.URL))
		case <-time.After(every):
		}
	}
}
