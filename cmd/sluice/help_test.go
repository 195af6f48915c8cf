package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// visibleCommands walks the command tree below root, depth first, leaving
// out hidden commands and cobra's own help command.
func visibleCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			out = append(out, sub)
			walk(sub)
		}
	}
	walk(root)
	return out
}

// TestHelpText reads the help of every command of the binary and fails on
// what a user saw garbled: a flag's default printed twice ("(default: all)
// (default [])"), a default shown escaped ("%v\\n"), a backquoted phrase
// in a flag's usage that pflag takes for the value's name ("-t,
// --cluster-id sluice storage random-uuid"), a command without a short
// description, an empty list shown as a default ("(default [])").
func TestHelpText(t *testing.T) {
	root := newRootCommand()
	for _, c := range append([]*cobra.Command{root}, visibleCommands(root)...) {
		path := c.CommandPath()
		if strings.TrimSpace(c.Short) == "" {
			t.Errorf("%s: no Short description", path)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			for _, problem := range flagProblems(f) {
				t.Errorf("%s --%s: %s", path, f.Name, problem)
			}
		})
	}
}

// escapedDefault matches a quoted default holding a backslash escape:
// pflag prints string defaults with %q, so a default of `\n` (the two
// characters a user types) shows as "\\n".
var escapedDefault = regexp.MustCompile(`\(default "[^"]*\\\\`)

// flagProblems lists what is wrong with one flag's line of help.
func flagProblems(f *pflag.Flag) []string {
	var problems []string
	fs := pflag.NewFlagSet("one", pflag.ContinueOnError)
	fs.AddFlag(f)
	line := fs.FlagUsages()
	if n := strings.Count(line, "(default"); n > 1 {
		problems = append(problems, fmt.Sprintf("the default is given %d times: %q", n, strings.TrimSpace(line)))
	}
	if strings.Contains(line, "(default [])") {
		problems = append(problems, fmt.Sprintf("an empty list is shown as the default: %q", strings.TrimSpace(line)))
	}
	if escapedDefault.MatchString(line) {
		problems = append(problems, fmt.Sprintf("the default is shown escaped: %q", strings.TrimSpace(line)))
	}
	if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
		problems = append(problems, fmt.Sprintf("a backquoted %q in the usage is shown as the value's name: %q", name, strings.TrimSpace(line)))
	}
	if strings.TrimSpace(f.Usage) == "" {
		problems = append(problems, "no usage text")
	}
	return problems
}

// TestFlagProblemsCatches checks the checker on the faults it is for.
func TestFlagProblemsCatches(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.StringSlice("acks", []string{"all"}, "acknowledgements (default: all)")
	fs.Int32Slice("partitions", nil, "partitions to read")
	fs.String("format", `%v\n`, "output format")
	fs.StringP("cluster-id", "t", "", "the id from `sluice storage random-uuid`")
	fs.String("good", `x`, "a `FILE` to read")
	for name, want := range map[string]string{"acks": "given 2 times", "partitions": "empty list", "format": "shown escaped", "cluster-id": "value's name", "good": ""} {
		got := strings.Join(flagProblems(fs.Lookup(name)), "; ")
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("--%s: problems %q, want %q", name, got, want)
		}
	}
}

// TestCLIDocListsEveryCommand compares the overview table of docs/cli.md
// with the command tree, both ways, so neither drifts from the other.
func TestCLIDocListsEveryCommand(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := overviewCommands(string(doc))
	root := newRootCommand()
	var missing []string
	for _, c := range visibleCommands(root) {
		name := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if !slices.Contains(listed, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/cli.md's overview does not list: %s", strings.Join(missing, ", "))
	}
	for _, name := range listed {
		c, rest, err := root.Find(strings.Fields(name))
		if err != nil || len(rest) > 0 || c == root {
			t.Errorf("docs/cli.md's overview lists `%s`, which is no command", name)
		}
	}
}

// overviewCommands reads the command names from the overview table of
// docs/cli.md (between "<!-- commands -->" and "<!-- /commands -->"):
// each row names a command in its first cell and its subcommands, in
// backquotes, in its second.
func overviewCommands(doc string) []string {
	start := strings.Index(doc, "<!-- commands -->")
	end := strings.Index(doc, "<!-- /commands -->")
	if start < 0 || end < start {
		return nil
	}
	var out []string
	row := regexp.MustCompile("(?m)^\\| `sluice ([a-z -]+)` \\|([^|]*)\\|")
	sub := regexp.MustCompile("`([a-z -]+)`")
	for _, m := range row.FindAllStringSubmatch(doc[start:end], -1) {
		cmd := strings.TrimSpace(m[1])
		out = append(out, cmd)
		for _, s := range sub.FindAllStringSubmatch(m[2], -1) {
			out = append(out, cmd+" "+strings.TrimSpace(s[1]))
		}
	}
	return out
}
