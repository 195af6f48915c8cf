package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// keyFields name a response element: the first present is its key.
var keyFields = []string{"Topic", "Name", "Group", "TransactionalID", "ResourceName", "Key", "User", "Partition"}

// skipFields hold what differs between two brokers whatever the ACLs
// (addresses, ids, log dirs, configs, members, quorum state) or is not an
// answer to authorization.
var skipFields = map[string]bool{
	"Brokers": true, "Nodes": true, "NodeEndpoints": true, "Configs": true, "Members": true,
	"ActiveProducers": true, "CurrentVoters": true, "Observers": true,
	"Replicas": true, "ISR": true, "OfflineReplicas": true, "ReplicaDirectories": true,
	"CredentialInfos": true, "ErrorRecords": true,
	"AbortedTransactions": true, "DivergingEpoch": true, "CurrentLeader": true, "SnapshotID": true,
}

// retriable codes are waited out: coordinators and leaders that are still
// being created or loaded.
var retriable = []int16{kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code,
	kerr.NotCoordinator.Code, kerr.LeaderNotAvailable.Code}

// items lists every error code and authorized operations field of a
// response, with the path of resource names leading to it, sorted.
func items(resp any) (out []string, retry bool) {
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f, fv := t.Field(i), v.Field(i)
			switch {
			case !f.IsExported() || skipFields[f.Name]:
			case strings.HasSuffix(f.Name, "ErrorCode") && fv.Kind() == reflect.Int16:
				code := int16(fv.Int())
				retry = retry || slices.Contains(retriable, code)
				out = append(out, prefix+f.Name+"="+codeName(code))
			case strings.HasSuffix(f.Name, "AuthorizedOperations") && fv.Kind() == reflect.Int32:
				out = append(out, prefix+f.Name+"="+opNames(int32(fv.Int())))
			case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
				for j := 0; j < fv.Len(); j++ {
					el := prefix + f.Name + "[" + elementKey(fv.Index(j), j) + "]"
					out = append(out, el)
					walk(el+".", fv.Index(j))
				}
			}
		}
	}
	walk("", reflect.ValueOf(resp))
	slices.Sort(out)
	return out, retry
}

// elementKey is the value of an element's first key field, or its index.
func elementKey(v reflect.Value, i int) string {
	for _, name := range keyFields {
		f := v.FieldByName(name)
		if !f.IsValid() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			return f.String()
		case reflect.Pointer:
			if f.IsNil() {
				return "null"
			}
			if f.Elem().Kind() == reflect.String {
				return f.Elem().String()
			}
		case reflect.Int32:
			return fmt.Sprint(f.Int())
		}
	}
	return fmt.Sprint(i)
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprint(code)
}

var operationNames = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

// opNames renders a KIP-430 bit field (INT32_MIN: not asked).
func opNames(bits int32) string {
	if bits == -2147483648 {
		return "omitted"
	}
	var names []string
	for i, n := range operationNames {
		if bits&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return "[" + strings.Join(names, ",") + "]"
}
