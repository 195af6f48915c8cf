package sasl

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// UnsecuredValidator validates unsecured JWTs (alg "none"), Kafka's
// OAuthBearerUnsecuredValidatorCallbackHandler, the default OAUTHBEARER
// validator and meant for development only: anyone can mint a token.
type UnsecuredValidator struct {
	principalClaim string
	scopeClaim     string
	requiredScope  []string
	clockSkew      time.Duration
}

// The JAAS options UnsecuredValidator reads.
const (
	unsecuredPrincipalClaimOption = "unsecuredValidatorPrincipalClaimName"
	unsecuredScopeClaimOption     = "unsecuredValidatorScopeClaimName"
	unsecuredRequiredScopeOption  = "unsecuredValidatorRequiredScope"
	unsecuredClockSkewOption      = "unsecuredValidatorAllowableClockSkewMs"
)

// oauthScopeItem is a scope item of RFC 6749 section 3.3.
var oauthScopeItem = regexp.MustCompile(`^[\x21\x23-\x5B\x5D-\x7E]+$`)

// NewUnsecuredValidator reads the validator's options from the listener's
// OAUTHBEARER JAAS entry: unsecuredValidatorPrincipalClaimName (default
// sub), unsecuredValidatorScopeClaimName (default scope),
// unsecuredValidatorRequiredScope (space-delimited) and
// unsecuredValidatorAllowableClockSkewMs (default 0). Kafka reads them at
// each validation; a bad one fails here instead, naming the option.
func NewUnsecuredValidator(e JAASEntry) (*UnsecuredValidator, error) {
	v := &UnsecuredValidator{principalClaim: "sub", scopeClaim: "scope"}
	if s := strings.TrimSpace(e.Options[unsecuredPrincipalClaimOption]); s != "" {
		v.principalClaim = s
	}
	if s := strings.TrimSpace(e.Options[unsecuredScopeClaimOption]); s != "" {
		v.scopeClaim = s
	}
	for _, item := range strings.Split(strings.TrimSpace(e.Options[unsecuredRequiredScopeOption]), " ") {
		if item == "" {
			continue
		}
		if !oauthScopeItem.MatchString(item) {
			return nil, fmt.Errorf("%s: invalid scope value: %s", unsecuredRequiredScopeOption, item)
		}
		v.requiredScope = append(v.requiredScope, item)
	}
	if s := strings.TrimSpace(e.Options[unsecuredClockSkewOption]); s != "" {
		ms, err := strconv.ParseInt(s, 10, 32)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s must be a non-negative integer, not %q", unsecuredClockSkewOption, s)
		}
		v.clockSkew = time.Duration(ms) * time.Millisecond
	}
	return v, nil
}

// Validate parses token as an unsecured JWS and checks it as Kafka does:
// an exp claim not yet passed, a non-blank principal claim, an iat (if
// any) not in the future and before exp, and the required scope.
func (v *UnsecuredValidator) Validate(token string, now time.Time) (Token, error) {
	claims, err := parseUnsecuredJWS(token)
	if err != nil {
		return Token{}, err
	}
	exp, hasExp, err := numberClaim(claims, "exp")
	if err != nil || !hasExp {
		return Token{}, invalidToken("No expiration time in JWT")
	}
	principal, ok := claims[v.principalClaim].(string)
	if !ok || strings.TrimSpace(principal) == "" {
		return Token{}, invalidToken("No principal name in JWT claim: %s", v.principalClaim)
	}
	iat, hasIat, err := numberClaim(claims, "iat")
	if err != nil {
		return Token{}, invalidToken("%v", err)
	}
	scope, err := unsecuredScope(claims, v.scopeClaim)
	if err != nil {
		return Token{}, invalidToken("%v", err)
	}
	nowMs, skewMs := float64(now.UnixMilli()), float64(v.clockSkew.Milliseconds())
	switch {
	case hasIat && 1000*iat > nowMs+skewMs:
		return Token{}, invalidToken("the Issued At value (%f seconds) was after the indicated time plus allowable clock skew", iat)
	case nowMs-skewMs >= 1000*exp:
		return Token{}, invalidToken("the indicated time minus allowable clock skew was on or after the Expiration Time value (%f seconds)", exp)
	case hasIat && exp <= iat:
		return Token{}, invalidToken("the Expiration Time (%f seconds) was not after the Issued At time (%f seconds)", exp, iat)
	}
	for _, want := range v.requiredScope {
		if !slices.Contains(scope, want) {
			return Token{}, &TokenError{Status: "insufficient_scope",
				Scope:  "[" + strings.Join(v.requiredScope, ", ") + "]", // Java's List.toString
				Reason: fmt.Sprintf("the provided scope %v was missing a required scope (%s)", scope, want)}
		}
	}
	t := Token{Principal: principal, Scope: scope, Expiry: time.UnixMilli(secondsToMillis(exp))}
	if hasIat {
		t.IssuedAt = time.UnixMilli(secondsToMillis(iat))
	}
	return t, nil
}

// secondsToMillis is Kafka's Math.round(seconds * 1000), saturating as
// Java's does.
func secondsToMillis(sec float64) int64 {
	return int64(math.Round(max(min(sec*1000, 1<<62), -(1 << 62))))
}

// parseUnsecuredJWS reads header.claims. (an empty signature) and returns
// the claims; the header's alg must be "none".
func parseUnsecuredJWS(token string) (map[string]any, error) {
	if strings.Contains(token, "..") {
		return nil, invalidToken("Malformed compact serialization contains '..'")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, invalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
	}
	header, err := decodeJSONPart(parts[0])
	if err != nil {
		return nil, err
	}
	claims, err := decodeJSONPart(parts[1])
	if err != nil {
		return nil, err
	}
	if alg, ok := header["alg"]; !ok || fmt.Sprint(alg) != "none" {
		return nil, invalidToken("Unsecured JWS must have 'none' for an algorithm")
	}
	if parts[2] != "" {
		return nil, invalidToken("Unsecured JWS must not contain a digital signature")
	}
	return claims, nil
}

// decodeJSONPart decodes a base64url (or, as Kafka's decoder takes,
// standard base64) JSON object, padding optional.
func decodeJSONPart(s string) (map[string]any, error) {
	s = strings.TrimRight(s, "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(s); err != nil || strings.ContainsAny(s, "\r\n") {
			return nil, invalidToken("malformed Base64 URL encoded value")
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, invalidToken("malformed JSON")
	}
	return m, nil
}

// numberClaim reads a numeric claim; a claim of another type is an error.
func numberClaim(claims map[string]any, name string) (float64, bool, error) {
	v, ok := claims[name]
	if !ok {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok {
		return 0, false, fmt.Errorf("the '%s' claim was not of type Number", name)
	}
	return f, true, nil
}

// unsecuredScope reads the scope claim as Kafka's OAuthBearerUnsecuredJws:
// a string is one item (trimmed, none if blank), a list its non-blank
// items; anything else but a missing claim is an error.
func unsecuredScope(claims map[string]any, name string) ([]string, error) {
	var scope []string
	switch v := claims[name].(type) {
	case nil:
	case string:
		if s := strings.TrimSpace(v); s != "" {
			scope = append(scope, s)
		}
	case []any:
		for _, item := range v {
			if s := strings.TrimSpace(jsonText(item)); s != "" && !slices.Contains(scope, s) {
				scope = append(scope, s)
			}
		}
	default:
		return nil, fmt.Errorf("the '%s' claim was not of type List", name)
	}
	slices.Sort(scope)
	return scope, nil
}

// jsonText is Jackson's asText of an array item: a string as is, a number
// or boolean written out, anything else empty.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64, bool:
		return fmt.Sprint(v)
	}
	return ""
}
