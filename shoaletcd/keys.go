package shoaletcd

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// keys is the layout of one budget in etcd:
//
//	PREFIX NAME/size         N, in decimal; no lease (it outlives members)
//	PREFIX NAME/members/ID   the member's record (JSON), under its lease
//	PREFIX NAME/slots/I      the ID of the member owning slot I, under its lease
type keys struct {
	root string // PREFIX NAME "/"
}

func newKeys(prefix, name string) keys { return keys{root: prefix + name + "/"} }

func (k keys) size() string            { return k.root + "size" }
func (k keys) members() string         { return k.root + "members/" }
func (k keys) member(id string) string { return k.members() + id }
func (k keys) slots() string           { return k.root + "slots/" }
func (k keys) slot(i int) string       { return k.slots() + strconv.Itoa(i) }

// slotOf returns the slot number of a slot key, or false for another key.
func (k keys) slotOf(key string) (int, bool) {
	s, ok := strings.CutPrefix(key, k.slots())
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0
}

// memberOf returns the member ID of a member key, or false for another key.
func (k keys) memberOf(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, k.members())
	return id, ok && id != ""
}

// fenceKey derives the budget's advisory-lock key from its root, so every
// member computes the same one and budgets under different names (or
// prefixes) do not share a fence.
func fenceKey(prefix, name string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(prefix + name))
	return int32(h.Sum32())
}
