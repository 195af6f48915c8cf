// Command keygen writes internal/config/keys_gen.go: one typed key value per key of the
// broker and topic tables of kafka_keys_gen.go (config.NumPartitions, config.TopicSegmentMs, ...), so a misspelt
// key or a key of the wrong type fails to compile. It also writes keys_list_gen_test.go, the
// list of those values for the test that resolves each against its table. It reads the
// table's source rather than importing internal/config, which does not compile without the
// key values it uses.
// tools/configgen/run.sh calls it after regenerating the table; by hand:
//
//	go run ./tools/configgen/keygen          # rewrite the files
//	go run ./tools/configgen/keygen -check   # exit 1 when they are stale
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	tableFile = "kafka_keys_gen.go"
	keysFile  = "keys_gen.go"
	listFile  = "keys_list_gen_test.go"
)

func main() {
	dir := flag.String("dir", "internal/config", "the config package's directory")
	check := flag.Bool("check", false, "report whether the files are up to date instead of rewriting them")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		slog.Error("keygen failed", "err", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	broker, topic, err := readTables(filepath.Join(dir, tableFile))
	if err != nil {
		return err
	}
	files, err := generate(broker, topic)
	if err != nil {
		return err
	}
	for name, want := range files {
		path := filepath.Join(dir, name)
		if check {
			got, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("%s is stale; run `go run ./tools/configgen/keygen`", path)
			}
			continue
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// keyDef is what keygen needs of a table entry: the key and its type's constant (TypeInt).
type keyDef struct {
	Name string
	Type string
}

// genKey is one key value to declare.
type genKey struct {
	goName string
	goType string
	def    keyDef
}

// readTables reads the broker and topic tables from the source of kafka_keys_gen.go.
func readTables(path string) (broker, topic []keyDef, err error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the key table: %w", err)
	}
	tables := map[string][]keyDef{}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || (fn.Name.Name != "brokerKeyDefs" && fn.Name.Name != "topicKeyDefs") {
			continue
		}
		defs, err := tableDefs(fn)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, fn.Name.Name, err)
		}
		tables[fn.Name.Name] = defs
	}
	if len(tables["brokerKeyDefs"]) == 0 || len(tables["topicKeyDefs"]) == 0 {
		return nil, nil, fmt.Errorf("%s: brokerKeyDefs or topicKeyDefs missing or empty", path)
	}
	return tables["brokerKeyDefs"], tables["topicKeyDefs"], nil
}

// tableDefs reads a func whose body is `return []KeyDef{{Name: "...", Type: TypeX, ...}, ...}`.
func tableDefs(fn *ast.FuncDecl) ([]keyDef, error) {
	if len(fn.Body.List) != 1 {
		return nil, errors.New("body is not a single return")
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, errors.New("body is not a single return")
	}
	list, ok := ret.Results[0].(*ast.CompositeLit)
	if !ok {
		return nil, errors.New("return value is not a composite literal")
	}
	var defs []keyDef
	for _, elt := range list.Elts {
		lit, ok := elt.(*ast.CompositeLit)
		if !ok {
			return nil, errors.New("table entry is not a composite literal")
		}
		d, err := entryDef(lit)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

func entryDef(lit *ast.CompositeLit) (keyDef, error) {
	var d keyDef
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		field, _ := kv.Key.(*ast.Ident)
		switch {
		case field == nil:
		case field.Name == "Name":
			if b, ok := kv.Value.(*ast.BasicLit); ok && b.Kind == token.STRING {
				d.Name, _ = strconv.Unquote(b.Value)
			}
		case field.Name == "Type":
			if id, ok := kv.Value.(*ast.Ident); ok {
				d.Type = id.Name
			}
		}
	}
	if d.Name == "" || d.Type == "" {
		return d, fmt.Errorf("table entry without a literal Name and Type constant (%q)", d.Name)
	}
	return d, nil
}

// generate renders both files from the tables.
func generate(broker, topic []keyDef) (map[string][]byte, error) {
	keys, err := goKeys(broker, topic)
	if err != nil {
		return nil, err
	}
	src, err := format.Source(renderKeys(keys))
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", keysFile, err)
	}
	list, err := format.Source(renderList(keys))
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", listFile, err)
	}
	return map[string][]byte{keysFile: src, listFile: list}, nil
}

// brokerTypes maps Kafka's types to the broker key types of internal/config/keytypes.go.
func brokerTypes() map[string]string {
	return map[string]string{
		"TypeBoolean": "BoolKey", "TypeInt": "IntKey", "TypeShort": "IntKey",
		"TypeLong": "LongKey", "TypeDouble": "DoubleKey", "TypeString": "StringKey",
		"TypeList": "ListKey", "TypeClass": "ClassKey", "TypePassword": "PasswordKey",
	}
}

// topicTypes maps Kafka's types to the topic key types; the topic table has no class or
// password key, and a new one fails generation until it has a type.
func topicTypes() map[string]string {
	return map[string]string{
		"TypeBoolean": "TopicBoolKey", "TypeInt": "TopicIntKey", "TypeShort": "TopicIntKey",
		"TypeLong": "TopicLongKey", "TypeDouble": "TopicDoubleKey", "TypeString": "TopicStringKey",
		"TypeList": "TopicListKey",
	}
}

// goKeys names every key, failing on a type without a key type or on two keys with one Go name.
func goKeys(broker, topic []keyDef) ([]genKey, error) {
	var keys []genKey
	var errs []error
	owner := map[string]string{}
	add := func(prefix string, types map[string]string, d keyDef) {
		goType, ok := types[d.Type]
		if !ok {
			errs = append(errs, fmt.Errorf("%s%s: no key type for Kafka type %s", prefix, d.Name, d.Type))
			return
		}
		name := prefix + goName(d.Name)
		if prev, dup := owner[name]; dup {
			errs = append(errs, fmt.Errorf("Go name %s collides: %s and %s%s", name, prev, prefix, d.Name))
			return
		}
		owner[name] = prefix + d.Name
		keys = append(keys, genKey{goName: name, goType: goType, def: d})
	}
	for _, d := range broker {
		add("", brokerTypes(), d)
	}
	for _, d := range topic {
		add("Topic", topicTypes(), d)
	}
	return keys, errors.Join(errs...)
}

// acronyms are the key parts Go spells in capitals (or its own way).
func acronyms() map[string]string {
	return map[string]string{
		"api": "API", "dlq": "DLQ", "dn": "DN", "id": "ID", "io": "IO", "ip": "IP", "isr": "ISR",
		"jaas": "JAAS", "jti": "JTI", "jwks": "JWKS", "jwt": "JWT", "lz4": "LZ4", "oauthbearer": "OAuthBearer",
		"san": "SAN", "sasl": "SASL", "ssl": "SSL", "ttl": "TTL", "url": "URL",
	}
}

// goName turns a dotted key into CamelCase: num.partitions is NumPartitions. Dashes and
// underscores separate parts too.
func goName(key string) string {
	var b strings.Builder
	acronyms := acronyms()
	for _, part := range strings.FieldsFunc(key, func(r rune) bool { return r == '.' || r == '-' || r == '_' }) {
		if a, ok := acronyms[part]; ok {
			b.WriteString(a)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

const header = "// Code generated by tools/configgen/keygen from the key table of kafka_keys_gen.go; DO NOT EDIT.\n// Regenerate with: go run ./tools/configgen/keygen\n\npackage config\n"

func renderKeys(keys []genKey) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	section := ""
	for _, k := range keys {
		if s := sectionOf(k); s != section {
			if section != "" {
				b.WriteString(")\n")
			}
			section = s
			b.WriteString(s)
		}
		kind := strings.ToLower(strings.TrimPrefix(k.def.Type, "Type"))
		fmt.Fprintf(&b, "\t// %s is %s (%s).\n\t%s = %s{%q}\n", k.goName, k.def.Name, kind, k.goName, k.goType, k.def.Name)
	}
	if section != "" {
		b.WriteString(")\n")
	}
	return b.Bytes()
}

func sectionOf(k genKey) string {
	if strings.HasPrefix(k.goType, "Topic") {
		return "\n// Kafka's topic keys (LogConfig), read from a TopicConfig.\nvar (\n"
	}
	return "\n// Kafka's broker keys (KafkaConfig), read from a *Config.\nvar (\n"
}

func renderList(keys []genKey) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("\n// generatedKeys lists every value of keys_gen.go for the test that resolves them.\nfunc generatedKeys() []namedKey {\n\treturn []namedKey{\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t\t%s,\n", k.goName)
	}
	b.WriteString("\t}\n}\n")
	return b.Bytes()
}
