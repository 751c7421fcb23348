package cli

import "testing"

func TestDevListen(t *testing.T) {
	for _, tc := range []struct {
		o    devOptions
		want string
	}{
		{devOptions{Listen: "127.0.0.1:9876"}, "127.0.0.1:9876"},
		{devOptions{Listen: "127.0.0.1:9876", Port: 8787}, "127.0.0.1:8787"},
		{devOptions{Listen: "127.0.0.1:9876", IP: "0.0.0.0", Port: 1}, "0.0.0.0:1"},
		{devOptions{Listen: "127.0.0.1:9876", IP: "::1"}, "[::1]:9876"},
	} {
		if got, err := devListen(&tc.o); err != nil || got != tc.want {
			t.Errorf("%+v: %q %v, want %q", tc.o, got, err, tc.want)
		}
	}
	if _, err := devListen(&devOptions{Listen: "127.0.0.1:1", Port: 70000}); err == nil {
		t.Error("--port 70000 accepted")
	}
}
