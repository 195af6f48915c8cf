package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// An expression is one PromQL text of the dashboard or the rules, with
// where it comes from for failure messages.
type expression struct {
	where string
	expr  string
	// variable marks a Grafana variable query (label_values and friends).
	variable bool
}

// repoPath is path inside the repository, found from this file's place.
func repoPath(path string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", path)
}

const (
	dashboardPath = "deploy/grafana/sluice-overview.json"
	rulesPath     = "deploy/prometheus/sluice-alerts.yml"
	configPath    = "deploy/prometheus/prometheus.yml"
)

// dashboard is the part of a Grafana dashboard the check reads. Rows of the
// current schema are panels of type "row" in the flat list; a collapsed
// row keeps its panels inside it, so both places are walked.
type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// dashboardExpressions reads every panel target and variable query of the
// dashboard JSON.
func dashboardExpressions(data []byte) ([]expression, *dashboard, error) {
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, nil, fmt.Errorf("dashboard JSON: %w", err)
	}
	var out []expression
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, expression{where: fmt.Sprintf("panel %q target %s", p.Title, t.RefID), expr: t.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := variableQuery(v.Query)
		if err != nil {
			return nil, nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		out = append(out, expression{where: "variable " + v.Name, expr: q, variable: true})
	}
	return out, &d, nil
}

// variableQuery is a variable's query: a string in old dashboards, an
// object with a "query" field in current ones.
func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("query is neither a string nor an object: %w", err)
	}
	return obj.Query, nil
}

// ruleExpressions reads the expr of every rule of a Prometheus rules file,
// and the names its recording rules define. There is no YAML library in
// the module, so it reads the layout the file keeps: "- alert: X" or
// "- record: x" opens a rule, "expr:" holds a one-line value or a block
// scalar (| or >) indented below it. promtool check rules (make
// prometheus-test) checks the file as Prometheus reads it, and compares its
// rule count with this one's.
func ruleExpressions(data []byte) (exprs []expression, recorded []string, err error) {
	lines := strings.Split(string(data), "\n")
	rule := ""
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		trimmed = strings.TrimPrefix(trimmed, "- ")
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "alert":
			rule = "alert " + value
		case "record":
			rule = "record " + value
			recorded = append(recorded, value)
		case "expr":
			if rule == "" {
				return nil, nil, fmt.Errorf("line %d: expr outside a rule", i+1)
			}
			expr := value
			if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
				expr, i = blockScalar(lines, i)
			}
			expr = unquoteYAML(expr)
			if expr == "" {
				return nil, nil, fmt.Errorf("line %d: %s has an empty expr", i+1, rule)
			}
			exprs = append(exprs, expression{where: rule, expr: expr})
		}
	}
	return exprs, recorded, nil
}

// blockScalar gathers the lines indented deeper than the key at line i and
// returns them with the index of the last one.
func blockScalar(lines []string, i int) (string, int) {
	keyIndent := indentOf(lines[i])
	var body []string
	j := i + 1
	for ; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) == "" {
			body = append(body, "")
			continue
		}
		if indentOf(lines[j]) <= keyIndent {
			break
		}
		body = append(body, strings.TrimSpace(lines[j]))
	}
	return strings.TrimSpace(strings.Join(body, "\n")), j - 1
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// unquoteYAML removes the quotes of a quoted one-line YAML scalar.
func unquoteYAML(s string) string {
	if len(s) >= 2 && (s[0] == '\'' && s[len(s)-1] == '\'') {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `\"`, `"`)
	}
	return s
}

// readRepoFile reads a file of the repository.
func readRepoFile(path string) ([]byte, error) {
	data, err := os.ReadFile(repoPath(path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}
