package shoal

import (
	"io"
	"reflect"
)

// ownClose returns the Close a Config without one gets: the connection
// type's own Close method, when it has one, so that a pool of net.Conn
// closes its connections without being told how; nil otherwise. The type
// is asked once, in New: a type assertion on each connection could not tell
// an interface type such as net.Conn from its dynamic values.
func ownClose[T any]() func(T) error {
	t := reflect.TypeFor[T]()
	switch {
	case t.Implements(reflect.TypeFor[io.Closer]()):
		return func(c T) error {
			if closer, ok := any(c).(io.Closer); ok {
				return closer.Close()
			}
			return nil // a nil interface value: nothing to close
		}
	case t.Implements(reflect.TypeFor[interface{ Close() }]()):
		return func(c T) error {
			if closer, ok := any(c).(interface{ Close() }); ok {
				closer.Close()
			}
			return nil
		}
	}
	return nil
}
