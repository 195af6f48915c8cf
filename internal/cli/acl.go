package cli

// sluice acl: create, list and delete ACL bindings with Kafka's kafka-acls
// vocabulary (--allow-principal, --deny-principal, --allow-host,
// --deny-host, --operation, --topic, --group, --cluster,
// --transactional-id, --resource-pattern-type, --principal, and the
// --producer / --consumer conveniences), through CreateAcls, DescribeAcls
// and DeleteAcls.

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclFlags are kafka-acls' options.
type aclFlags struct {
	topics, groups, txnIDs          []string
	cluster                         bool
	allow, deny, allowHosts, denies []string
	principals                      []string
	operations                      []string
	pattern                         string
	producer, consumer, idempotent  bool
}

func newACLCommand() *cobra.Command {
	conn := &connection{}
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Create, list and delete ACLs (Kafka's kafka-acls vocabulary)",
		Example: `  sluice acl create --allow-principal User:alice --operation Read --operation Write --topic orders
  sluice acl create --allow-principal User:alice --consumer --topic orders --group billing
  sluice acl create --deny-principal User:* --deny-host 10.0.0.9 --operation All --topic orders- --resource-pattern-type prefixed
  sluice acl list --topic orders
  sluice acl list --principal User:alice
  sluice acl delete --allow-principal User:alice --operation Read --topic orders`,
	}
	addConnectionFlags(cmd, conn)
	cmd.AddCommand(newACLCreateCommand(conn), newACLListCommand(conn), newACLDeleteCommand(conn))
	return cmd
}

func addResourceFlags(cmd *cobra.Command, f *aclFlags, patternDefault string) {
	cmd.Flags().StringArrayVar(&f.topics, "topic", nil, "topic (repeatable; '*' is every topic)")
	cmd.Flags().StringArrayVar(&f.groups, "group", nil, "consumer group (repeatable; '*' is every group)")
	cmd.Flags().StringArrayVar(&f.txnIDs, "transactional-id", nil, "transactional id (repeatable; '*' is every id)")
	cmd.Flags().BoolVar(&f.cluster, "cluster", false, "the cluster resource")
	cmd.Flags().StringVar(&f.pattern, "resource-pattern-type", patternDefault, "LITERAL, PREFIXED, or (list, delete) ANY or MATCH")
}

func addEntryFlags(cmd *cobra.Command, f *aclFlags) {
	cmd.Flags().StringArrayVar(&f.allow, "allow-principal", nil, "principal allowed, Type:Name (repeatable; User:* is everyone)")
	cmd.Flags().StringArrayVar(&f.deny, "deny-principal", nil, "principal denied, Type:Name (repeatable)")
	cmd.Flags().StringArrayVar(&f.allowHosts, "allow-host", nil, "host the allowed principals may come from (default *)")
	cmd.Flags().StringArrayVar(&f.denies, "deny-host", nil, "host the denied principals are denied from (default *)")
	cmd.Flags().StringArrayVar(&f.operations, "operation", nil,
		"Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens, All (repeatable)")
}

func newACLCreateCommand(conn *connection) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:     "create",
		Aliases: []string{"add"},
		Short:   "Create ACL bindings (kafka-acls --add)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			builders, err := f.createBuilders()
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			for _, b := range builders {
				results, err := adm.CreateACLs(ctx, b)
				if err != nil {
					return fmt.Errorf("create acls: %w", describe(err))
				}
				for _, r := range results {
					if r.Err != nil {
						return fmt.Errorf("create acl %s: %w", bindingString(r.Type, r.Name, r.Pattern, r.Principal, r.Host, r.Operation, r.Permission), describe(r.Err))
					}
					fmt.Fprintf(cmd.OutOrStdout(), "created %s\n", bindingString(r.Type, r.Name, r.Pattern, r.Principal, r.Host, r.Operation, r.Permission))
				}
			}
			return nil
		},
	}
	addResourceFlags(cmd, f, "literal")
	addEntryFlags(cmd, f)
	cmd.Flags().BoolVar(&f.producer, "producer", false, "the producer's ACLs: Write, Describe, Create on the topics; Write, Describe on the transactional ids")
	cmd.Flags().BoolVar(&f.consumer, "consumer", false, "the consumer's ACLs: Read, Describe on the topics; Read on the groups")
	cmd.Flags().BoolVar(&f.idempotent, "idempotent", false, "with --producer: IdempotentWrite on the cluster")
	return cmd
}

func newACLListCommand(conn *connection) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List ACL bindings (kafka-acls --list); no resource flag lists every binding",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := f.filter(true)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			results, err := adm.DescribeACLs(ctx, b)
			if err != nil {
				return fmt.Errorf("list acls: %w", describe(err))
			}
			var rows []string
			for _, r := range results {
				if r.Err != nil {
					return fmt.Errorf("list acls: %w", describe(r.Err))
				}
				for _, d := range r.Described {
					rows = append(rows, strings.Join([]string{d.Type.String(), d.Name, d.Pattern.String(), d.Principal, d.Host, d.Operation.String(), d.Permission.String()}, "\t"))
				}
			}
			sort.Strings(rows)
			rows = compactStrings(rows)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RESOURCE-TYPE\tNAME\tPATTERN\tPRINCIPAL\tHOST\tOPERATION\tPERMISSION")
			for _, row := range rows {
				fmt.Fprintln(tw, row)
			}
			return tw.Flush()
		},
	}
	addResourceFlags(cmd, f, "any")
	cmd.Flags().StringArrayVar(&f.principals, "principal", nil, "only the bindings of this principal (repeatable)")
	return cmd
}

func newACLDeleteCommand(conn *connection) *cobra.Command {
	f := &aclFlags{}
	cmd := &cobra.Command{
		Use:     "delete",
		Aliases: []string{"remove"},
		Short:   "Delete the ACL bindings matching the flags (kafka-acls --remove)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := f.filter(false)
			if err != nil {
				return err
			}
			ctx, adm, done, err := openAdmin(cmd, conn)
			if err != nil {
				return err
			}
			defer done()
			results, err := adm.DeleteACLs(ctx, b)
			if err != nil {
				return fmt.Errorf("delete acls: %w", describe(err))
			}
			for _, r := range results {
				if r.Err != nil {
					return fmt.Errorf("delete acls: %w", describe(r.Err))
				}
				for _, d := range r.Deleted {
					if d.Err != nil {
						return fmt.Errorf("delete acl: %w", describe(d.Err))
					}
					fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", bindingString(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission))
				}
			}
			return nil
		},
	}
	addResourceFlags(cmd, f, "literal")
	addEntryFlags(cmd, f)
	return cmd
}

func bindingString(t kmsg.ACLResourceType, name string, p kadm.ACLPattern, principal, host string, op kadm.ACLOperation, perm kmsg.ACLPermissionType) string {
	return fmt.Sprintf("%s %s %s:%s (%s) from %s: %s", perm, op, t, name, p, host, principal)
}

func compactStrings(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
