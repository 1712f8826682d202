package netlab

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agents-sandbox/asb/internal/testkit/fakemodel"
)

// Model puts the scripted stand-in model (internal/testkit/fakemodel) on a
// lab name: requests to Host whose path starts with Prefix (e.g.
// "/zen/v1/", an OpenAI-compatible base URL) get the script's answers
// instead of the lab's "netlab HOST PATH". They are recorded like every
// other request (headers included: the key the agent's request carried
// when it arrived); what the model saw of the conversation goes to Log.
type Model struct {
	Host   string
	Prefix string
	Steps  []fakemodel.ModelStep
	Log    string // JSON of ModelReport, rewritten after each request
}

// ModelReport is what the stand-in model has seen so far.
type ModelReport struct {
	Requests    int      `json:"requests"`
	StepsServed int      `json:"steps_served"`
	ToolResults []string `json:"tool_results"` // what the agent sent back of each tool call
	Summary     string   `json:"summary"`      // one line per request (fakemodel.Model.Summary)
}

// modelHandler answers the model's requests and passes the others to next.
type modelHandler struct {
	conf  *Model
	model *fakemodel.Model
	next  http.Handler
	mu    sync.Mutex
}

func newModelHandler(conf *Model, next http.Handler) (http.Handler, error) {
	m, err := fakemodel.New(conf.Steps...)
	if err != nil {
		return nil, err
	}
	return &modelHandler{conf: conf, model: m, next: next}, nil
}

func (h *modelHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	if !strings.EqualFold(host, h.conf.Host) || !strings.HasPrefix(r.URL.Path, h.conf.Prefix) {
		h.next.ServeHTTP(w, r)
		return
	}
	h.model.ServeHTTP(w, r)
	h.report()
}

// report rewrites the model's log (atomically: a reader never sees half).
func (h *modelHandler) report() {
	if h.conf.Log == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	raw, err := json.Marshal(ModelReport{
		Requests: len(h.model.Requests()), StepsServed: h.model.StepsServed(),
		ToolResults: h.model.ToolResults(), Summary: h.model.Summary(),
	})
	if err != nil {
		return
	}
	tmp := filepath.Join(filepath.Dir(h.conf.Log), "."+filepath.Base(h.conf.Log)+".tmp")
	if os.WriteFile(tmp, raw, 0o644) == nil {
		_ = os.Rename(tmp, h.conf.Log)
	}
}

// recordThen records each request (the recorder), then lets h answer it.
type recordThen struct {
	rec *recorder
	h   http.Handler
}

func (x recordThen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := x.rec.record(r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	x.h.ServeHTTP(w, r)
}
