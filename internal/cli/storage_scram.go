package cli

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/auth/sasl"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's SCRAM iteration bounds (ScramMechanism.minIterations and
// maxIterations).
const (
	scramMinIterations = 4096
	scramMaxIterations = 16384
)

// ParseAddScram reads one --add-scram argument of `storage format` as
// Kafka's ScramParser does, 'SCRAM-SHA-256=[name=alice,password=alice-secret]'
// (or salt and saltedpassword in base64 instead of password; iterations
// defaults to 4096), into the credential record the cluster starts with.
// Errors never carry the password.
func ParseAddScram(arg string) (*metadata.UserScramCredentialRecord, error) {
	arg = strings.TrimSpace(arg)
	mechName, conf, ok := strings.Cut(arg, "=")
	if !ok {
		return nil, fmt.Errorf("failed to find equals sign in SCRAM argument")
	}
	m := sasl.Mechanism(mechName)
	mech, known := metadata.ScramMechanismByName(mechName)
	if !known || !m.IsScram() {
		return nil, fmt.Errorf("the add-scram mechanism %s is not supported", mechName)
	}
	if !strings.HasPrefix(conf, "[") {
		return nil, fmt.Errorf("expected configuration string to start with [")
	}
	if !strings.HasSuffix(conf, "]") {
		return nil, fmt.Errorf("expected configuration string to end with ]")
	}
	comps := map[string]string{}
	for _, c := range strings.Split(conf[1:len(conf)-1], ",") {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return nil, fmt.Errorf("no equals sign found in a SCRAM component")
		}
		if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
			v = v[1 : len(v)-1]
		}
		comps[k] = v
	}
	return scramRecord(m, mech, comps)
}

func scramRecord(m sasl.Mechanism, mech metadata.ScramMechanism, comps map[string]string) (*metadata.UserScramCredentialRecord, error) {
	take := func(k string) (string, bool) {
		v, ok := comps[k]
		delete(comps, k)
		return v, ok
	}
	name, ok := take("name")
	if !ok {
		return nil, fmt.Errorf("you must supply 'name' to add-scram")
	}
	iterations := scramMinIterations
	if s, ok := take("iterations"); ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("failed to parse iterations count: %s", s)
		}
		iterations = n
	}
	if iterations < scramMinIterations || iterations > scramMaxIterations {
		return nil, fmt.Errorf("the 'iterations' value must be between %d and %d for add-scram using %s", scramMinIterations, scramMaxIterations, m)
	}
	saltText, hasSalt := take("salt")
	password, hasPassword := take("password")
	saltedText, hasSalted := take("saltedpassword")
	if len(comps) > 0 {
		keys := make([]string, 0, len(comps))
		for k := range comps {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("unknown SCRAM configurations: %s", strings.Join(keys, ", "))
	}
	var cred sasl.Credential
	var err error
	switch {
	case hasPassword && !hasSalt:
		cred, err = sasl.NewCredential(m, password, iterations, nil)
	case hasPassword:
		cred, err = credentialWithSalt(m, saltText, iterations, func(salt []byte) ([]byte, error) {
			return sasl.SaltedPassword(m, password, salt, iterations)
		})
	case !hasSalted:
		return nil, fmt.Errorf("you must supply one of 'password' or 'saltedpassword' to add-scram")
	case !hasSalt:
		return nil, fmt.Errorf("you must supply 'salt' with 'saltedpassword' to add-scram")
	default:
		cred, err = credentialWithSalt(m, saltText, iterations, func([]byte) ([]byte, error) {
			b, err := base64.StdEncoding.DecodeString(saltedText)
			if err != nil {
				return nil, fmt.Errorf("failed to decode given saltedPassword")
			}
			return b, nil
		})
	}
	if err != nil {
		return nil, err
	}
	return &metadata.UserScramCredentialRecord{Name: name, Mechanism: mech, Salt: cred.Salt,
		StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: int32(cred.Iterations)}, nil
}

func credentialWithSalt(m sasl.Mechanism, saltText string, iterations int, salted func([]byte) ([]byte, error)) (sasl.Credential, error) {
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil {
		return sasl.Credential{}, fmt.Errorf("failed to decode given salt: %s", saltText)
	}
	sp, err := salted(salt)
	if err != nil {
		return sasl.Credential{}, err
	}
	return sasl.CredentialFromSaltedPassword(m, salt, sp, iterations)
}
