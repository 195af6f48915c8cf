package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The SCRAM mechanisms a user's credential may be stored for.
var userMechanisms = map[string]kadm.ScramMechanism{
	"SCRAM-SHA-256": kadm.ScramSha256,
	"SCRAM-SHA-512": kadm.ScramSha512,
}

func newUserCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Create, alter, delete and list SCRAM users (AlterUserScramCredentials, as kafka-configs --entity-type users)",
		Example: `  sluice user create alice --password-file alice.pw
  sluice user create bob --password-file bob.pw --mechanism SCRAM-SHA-512 --iterations 8192
  sluice user alter alice --password-file new.pw
  sluice user list
  sluice user delete bob --mechanism SCRAM-SHA-512`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(
		newUserUpsertCommand(conn, true),
		newUserUpsertCommand(conn, false),
		newUserDeleteCommand(conn),
		newUserListCommand(conn),
	)
	return cmd
}

// userPassword is where a password comes from: --password-file (its first
// line), or standard input with --password-stdin. A password is never an
// argument, so it stays out of shell histories and process lists.
type userPassword struct {
	file  string
	stdin bool
}

func (p *userPassword) read(cmd *cobra.Command) (string, error) {
	var r io.Reader
	switch {
	case p.file != "" && p.stdin:
		return "", errors.New("give either --password-file or --password-stdin")
	case p.file != "":
		f, err := os.Open(p.file)
		if err != nil {
			return "", fmt.Errorf("password file: %w", err)
		}
		defer f.Close()
		r = f
	case p.stdin:
		r = cmd.InOrStdin()
	default:
		return "", errors.New("a password is needed: --password-file FILE or --password-stdin")
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("the password is empty")
	}
	return line, nil
}

// newUserUpsertCommand is `user create` (the user must not have a
// credential for the mechanisms yet) or `user alter` (it must).
func newUserUpsertCommand(conn *connection, create bool) *cobra.Command {
	var pw userPassword
	mechs := []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}
	var iterations int32
	use, short, verb := "alter USER", "Change a user's SCRAM password for each mechanism it has or is named", "altered"
	if create {
		use, short, verb = "create USER", "Store a new user's SCRAM credentials (both mechanisms unless --mechanism)", "created"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			user := args[0]
			password, err := pw.read(cmd)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			have, err := userCredentials(ctx, adm, user)
			if err != nil {
				return err
			}
			names, err := upsertMechanisms(cmd, mechs, have, create)
			if err != nil {
				return fmt.Errorf("user %s: %w", user, err)
			}
			// Kafka refuses a user twice in one request: one a mechanism.
			for _, m := range names {
				up := kadm.UpsertSCRAM{User: user, Mechanism: userMechanisms[m], Iterations: iterations, Password: password}
				if err := alterSCRAM(ctx, adm, nil, []kadm.UpsertSCRAM{up}); err != nil {
					return fmt.Errorf("user %s %s: %w", user, m, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s (%d iterations)\n", verb, user, m, iterations)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&pw.file, "password-file", "", "read the password from the first line of this file")
	cmd.Flags().BoolVar(&pw.stdin, "password-stdin", false, "read the password from the first line of standard input")
	cmd.Flags().StringSliceVarP(&mechs, "mechanism", "m", mechs, "SCRAM-SHA-256 and/or SCRAM-SHA-512 (alter: default the mechanisms the user has)")
	cmd.Flags().Int32Var(&iterations, "iterations", 4096, "PBKDF2 iterations (Kafka accepts 4096 to 16384)")
	return cmd
}

// upsertMechanisms checks the named mechanisms against what the user has:
// create refuses existing ones, alter missing ones (and without
// --mechanism alters every one the user has).
func upsertMechanisms(cmd *cobra.Command, mechs []string, have map[string]int32, create bool) ([]string, error) {
	if !create && !cmd.Flags().Changed("mechanism") {
		if len(have) == 0 {
			return nil, errors.New("has no SCRAM credential (use user create)")
		}
		names := make([]string, 0, len(have))
		for m := range have {
			names = append(names, m)
		}
		slices.Sort(names)
		return names, nil
	}
	var names []string
	for _, m := range mechs {
		m = strings.ToUpper(strings.TrimSpace(m))
		if _, ok := userMechanisms[m]; !ok {
			return nil, fmt.Errorf("unknown mechanism %q (SCRAM-SHA-256 or SCRAM-SHA-512)", m)
		}
		_, exists := have[m]
		switch {
		case create && exists:
			return nil, fmt.Errorf("already has a %s credential (use user alter)", m)
		case !create && !exists:
			return nil, fmt.Errorf("has no %s credential (use user create)", m)
		}
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	return names, nil
}

func newUserDeleteCommand(conn *connection) *cobra.Command {
	var mechs []string
	cmd := &cobra.Command{
		Use:   "delete USER",
		Short: "Delete a user's SCRAM credentials (every mechanism unless --mechanism)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			user := args[0]
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			have, err := userCredentials(ctx, adm, user)
			if err != nil {
				return err
			}
			names := mechs
			if len(names) == 0 {
				for m := range have {
					names = append(names, m)
				}
				slices.Sort(names)
			}
			if len(names) == 0 {
				return fmt.Errorf("user %s has no SCRAM credential", user)
			}
			for _, m := range names {
				m = strings.ToUpper(strings.TrimSpace(m))
				mech, ok := userMechanisms[m]
				if !ok {
					return fmt.Errorf("unknown mechanism %q (SCRAM-SHA-256 or SCRAM-SHA-512)", m)
				}
				if err := alterSCRAM(ctx, adm, []kadm.DeleteSCRAM{{User: user, Mechanism: mech}}, nil); err != nil {
					return fmt.Errorf("user %s %s: %w", user, m, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s: %s\n", user, m)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&mechs, "mechanism", "m", nil, "SCRAM-SHA-256 and/or SCRAM-SHA-512 (default: every one the user has)")
	return cmd
}

func newUserListCommand(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "list [USER...]",
		Short: "List users with SCRAM credentials: mechanisms and iterations (never salts or keys)",
		RunE: func(cmd *cobra.Command, users []string) error {
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			described, err := adm.DescribeUserSCRAMs(ctx, users...)
			if err != nil {
				return describe(err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "USER\tMECHANISM\tITERATIONS")
			var errs []error
			for _, d := range described.Sorted() {
				if d.Err != nil {
					errs = append(errs, fmt.Errorf("user %s: %w", d.User, describe(d.Err)))
					continue
				}
				for _, c := range d.CredInfos {
					fmt.Fprintf(tw, "%s\t%s\t%d\n", d.User, c.Mechanism, c.Iterations)
				}
			}
			tw.Flush()
			return errors.Join(errs...)
		},
	}
}

// userCredentials are a user's mechanisms and iterations; none when it has
// no credential.
func userCredentials(ctx context.Context, adm *kadm.Client, user string) (map[string]int32, error) {
	described, err := adm.DescribeUserSCRAMs(ctx, user)
	if err != nil {
		return nil, describe(err)
	}
	have := map[string]int32{}
	d, ok := described[user]
	if !ok || errors.Is(d.Err, kerr.ResourceNotFound) {
		return have, nil
	}
	if d.Err != nil {
		return nil, fmt.Errorf("user %s: %w", user, describe(d.Err))
	}
	for _, c := range d.CredInfos {
		have[c.Mechanism.String()] = c.Iterations
	}
	return have, nil
}

// alterSCRAM sends one AlterUserScramCredentials and returns its error.
func alterSCRAM(ctx context.Context, adm *kadm.Client, del []kadm.DeleteSCRAM, up []kadm.UpsertSCRAM) error {
	res, err := adm.AlterUserSCRAMs(ctx, del, up)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return describe(err)
	}
	return nil
}
