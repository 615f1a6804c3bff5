package lint

// The memory plan's one home (docs/ARCHITECTURE.md "Adding a system",
// engine/system/kit/memplan.go): a variant package hands its plan to
// kit.Budget.Apply and enters a later phase with kit.Budget.Enter; it
// never sets the Go memory limit, moves the memory limit or fills the
// memory account itself, never hand-writes the deviation of what is held
// outside the budget (kit.HeldDeviation writes it from the plan's parts),
// its Prepare reads as the steps it takes (at most MaxPrepareLines), and
// the least budget it names is its plan's (kit.Size over its one sizing,
// kit.Plan.LeastBudget, which kit.Budget.Apply names in a refusal): it
// searches for no budget itself.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// MaxPrepareLines is the longest a variant's Prepare may be, from its
// signature to its closing brace.
const MaxPrepareLines = 80

// planOnly are the calls only engine/system/kit makes for a variant: the Go
// limit (GoMemoryLimit's family), the memory limit and the memory account.
var planOnly = []string{"LimitGo", "LimitGoStrict", "ApplyGoMemoryLimit", "GoMemoryLimit", "HoldOutsideBudget", "HoldOutside", "HoldDevice", "SetMemoryLimit"}

// leastOnly are the searches for a least budget only engine/system/kit
// makes (kit.Size, kit.Sizer.MinMemory through kit.Register).
var leastOnly = []string{"MinBudget", "MinMemoryOf"}

// leastWords are the words of the least budget kit.Budget.Apply appends to
// a refusal; a variant's format string that has them names a number of its
// own.
var leastWords = []string{"least budget that fits is %d", "minimum of %d"}

// heldWords are the words of the deviation kit.HeldDeviation writes with
// its numbers; a variant's format string that has them hand-writes it (a
// variant's fixed deviation saying what it holds outside the budget, with
// no numbers, is its Base's).
var heldWords = []string{"held outside the %d", "cgroup limit is %d", "memory limit is %d"}

// PlanViolations lists the breaks of the rules above in one Go file of a
// variant package (name is how the lines name it), one line each.
func PlanViolations(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Name.Name == "Prepare" && n.Recv != nil && n.Body != nil {
				lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
				if lines > MaxPrepareLines {
					out = append(out, fmt.Sprintf("%s: Prepare is %d lines (at most %d: split it into the steps it takes)", fset.Position(n.Pos()), lines, MaxPrepareLines))
				}
			}
		case *ast.CallExpr:
			var fn string
			switch f := n.Fun.(type) {
			case *ast.SelectorExpr:
				fn = f.Sel.Name
			case *ast.Ident:
				fn = f.Name
			}
			for _, p := range planOnly {
				if fn == p {
					out = append(out, fmt.Sprintf("%s: calls %s (the memory plan goes through kit.Budget.Apply and Enter)", fset.Position(n.Pos()), fn))
				}
			}
			for _, p := range leastOnly {
				if fn == p {
					out = append(out, fmt.Sprintf("%s: calls %s (the least budget is kit.Size's over the variant's one sizing: kit.Plan.LeastBudget)", fset.Position(n.Pos()), fn))
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			for _, w := range heldWords {
				if strings.Contains(s, w) {
					out = append(out, fmt.Sprintf("%s: hand-writes the deviation of memory held outside the budget (%q): give the plan kit.Parts", fset.Position(n.Pos()), w))
				}
			}
			for _, w := range leastWords {
				if strings.Contains(s, w) {
					out = append(out, fmt.Sprintf("%s: hand-writes the least budget of a refusal (%q): set kit.Plan.LeastBudget (kit.Size), which kit.Budget.Apply names", fset.Position(n.Pos()), w))
				}
			}
		}
		return true
	})
	return out, nil
}
