package shell

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// A command started with StartWaited gets its own exit status and all its
// output although the reaper collects every child (os/exec's Wait alone
// would find none), many at once.
func TestStartWaited(t *testing.T) {
	if !Reaping() {
		t.Fatal("the tests run with reaping enabled (TestMain)")
	}
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			var out bytes.Buffer
			cmd := exec.Command("/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exit $1", "sh", string(rune('0'+i%4)))
			cmd.Stdout = &out
			wait, err := StartWaited(cmd, nil)
			if err != nil {
				errs <- err
				return
			}
			err = wait()
			var ws *WaitStatusError
			switch {
			case out.Len() != 100000 || strings.Trim(out.String(), "x") != "":
				errs <- errors.New("output lost")
			case i%4 == 0 && err != nil:
				errs <- err
			case i%4 != 0 && (!errors.As(err, &ws) || ws.Status.ExitStatus() != i%4):
				errs <- fmt.Errorf("wrong status: %v", err)
			default:
				errs <- nil
			}
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
