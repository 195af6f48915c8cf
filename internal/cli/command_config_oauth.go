package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/auth/sasl"
)

// The OAuthBearerLoginModule options Kafka's default client login
// callback handler (OAuthBearerUnsecuredLoginCallbackHandler) reads.
const (
	unsecuredLoginPrefix          = "unsecuredLogin"
	unsecuredLoginStringClaim     = unsecuredLoginPrefix + "StringClaim_"
	unsecuredLoginNumberClaim     = unsecuredLoginPrefix + "NumberClaim_"
	unsecuredLoginListClaim       = unsecuredLoginPrefix + "ListClaim_"
	unsecuredLoginExtension       = unsecuredLoginPrefix + "Extension_"
	unsecuredLoginPrincipalOption = unsecuredLoginPrefix + "PrincipalClaimName"
	unsecuredLoginLifetimeOption  = unsecuredLoginPrefix + "LifetimeSeconds"
)

// unsecuredLoginToken makes the unsecured JWT (alg "none") Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler makes from the login module's
// options: the string, number and list claims, iat now and exp after
// unsecuredLoginLifetimeSeconds (default 3600), with a non-blank principal
// claim (unsecuredLoginPrincipalClaimName, default sub) required; and the
// SASL extensions of unsecuredLoginExtension_<name>. Such a token only
// logs in where the broker validates unsecured tokens (development).
func unsecuredLoginToken(e sasl.JAASEntry, now time.Time) (string, map[string]string, error) {
	claims := map[string]any{}
	extensions := map[string]string{}
	lifetime := int64(3600)
	for k, v := range e.Options {
		if err := addUnsecuredOption(claims, extensions, k, v); err != nil {
			return "", nil, err
		}
		if k == unsecuredLoginLifetimeOption {
			var err error
			if lifetime, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return "", nil, fmt.Errorf("%s must be a whole number of seconds", k)
			}
		}
	}
	if len(e.Options) == len(extensions) {
		return "", nil, fmt.Errorf("the %s options give no token (%sStringClaim_sub=\"...\" names the principal)", sasl.OAuthBearerLoginModule, unsecuredLoginPrefix)
	}
	principal := strings.TrimSpace(e.Options[unsecuredLoginPrincipalOption])
	if principal == "" {
		principal = "sub"
	}
	if s, _ := claims[principal].(string); strings.TrimSpace(s) == "" {
		return "", nil, fmt.Errorf("the token has no principal claim %s (%s%s)", principal, unsecuredLoginStringClaim, principal)
	}
	secs := float64(now.UnixMilli()) / 1000
	claims["iat"], claims["exp"] = secs, secs+float64(lifetime)
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", nil, fmt.Errorf("token claims: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(payload) + ".", extensions, nil
}

// addUnsecuredOption puts a claim or extension option into claims or
// extensions; other options are left to the caller.
func addUnsecuredOption(claims map[string]any, extensions map[string]string, k, v string) error {
	claim := func(prefix string) (string, error) {
		name := strings.TrimPrefix(k, prefix)
		if name == "iat" || name == "exp" {
			return "", fmt.Errorf("%s: cannot explicitly set the '%s' claim", k, name)
		}
		return name, nil
	}
	var name string
	var err error
	switch {
	case strings.HasPrefix(k, unsecuredLoginExtension) && len(k) > len(unsecuredLoginExtension):
		extensions[strings.TrimPrefix(k, unsecuredLoginExtension)] = v
	case strings.HasPrefix(k, unsecuredLoginStringClaim) && len(k) > len(unsecuredLoginStringClaim):
		if name, err = claim(unsecuredLoginStringClaim); err == nil {
			claims[name] = v
		}
	case strings.HasPrefix(k, unsecuredLoginNumberClaim) && len(k) > len(unsecuredLoginNumberClaim):
		if name, err = claim(unsecuredLoginNumberClaim); err == nil {
			var f float64
			if f, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return fmt.Errorf("%s is not a number", k)
			}
			claims[name] = f
		}
	case strings.HasPrefix(k, unsecuredLoginListClaim) && len(k) > len(unsecuredLoginListClaim):
		if name, err = claim(unsecuredLoginListClaim); err == nil {
			claims[name] = listClaim(v)
		}
	}
	return err
}

// listClaim splits v on its first character, Kafka's list claim syntax
// (",a,b" is ["a","b"]).
func listClaim(v string) []string {
	if len(v) <= 1 {
		return []string{}
	}
	return strings.Split(v[1:], v[:1])
}
