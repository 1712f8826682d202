package schema

import (
	"reflect"
	"testing"
)

// fill sets every field of v (a struct, recursively) to a non-zero value,
// so that a Clone that forgets a slice, map or pointer field shares it.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k)
		fill(t, e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i))
		}
	default:
		t.Fatalf("fill: no case for %s: add one, and to Agent.Clone if it holds references", v.Kind())
	}
}

// shared reports the first slice, map or pointer a and b share.
func shared(a, b reflect.Value, at string) string {
	switch a.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		if a.UnsafePointer() == b.UnsafePointer() {
			return at
		}
		if a.Kind() == reflect.Pointer {
			return shared(a.Elem(), b.Elem(), at)
		}
		if a.Kind() == reflect.Slice {
			return shared(a.Index(0), b.Index(0), at+"[0]")
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if s := shared(a.Field(i), b.Field(i), at+"."+a.Type().Field(i).Name); s != "" {
				return s
			}
		}
	}
	return ""
}

func TestAgentCloneSharesNothing(t *testing.T) {
	var a Agent
	fill(t, reflect.ValueOf(&a).Elem())
	c := a.Clone()
	if !reflect.DeepEqual(a, c) {
		t.Fatalf("the clone differs from the agent:\n%+v\n%+v", a, c)
	}
	if s := shared(reflect.ValueOf(a), reflect.ValueOf(c), "Agent"); s != "" {
		t.Errorf("the clone shares %s with the agent", s)
	}
}

func TestDefaultAgentsAreCopies(t *testing.T) {
	first := DefaultAgents()
	if len(first) == 0 {
		t.Fatal("no default agents")
	}
	want := first[0].Hosts[0]
	first[0].Hosts[0] = "changed.example.com"
	first[0].Name = "changed"
	if again := DefaultAgents(); again[0].Hosts[0] != want || again[0].Name == "changed" {
		t.Errorf("a caller's change reached the next caller: %+v", again[0])
	}
}
