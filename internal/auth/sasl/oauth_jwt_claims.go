package sasl

import (
	"slices"
	"strings"
	"time"
)

// checkClaims applies jose4j's JwtConsumer checks as Kafka's
// ValidatorAccessTokenValidator builds it, then Kafka's own
// ClaimValidationUtils, to verified claims.
func (v *JWTValidator) checkClaims(c map[string]any, now time.Time) (Token, error) {
	exp, hasExp, err := dateClaim(c, "exp")
	if err != nil {
		return Token{}, err
	}
	iat, hasIat, err := dateClaim(c, "iat")
	if err != nil {
		return Token{}, err
	}
	nbf, hasNbf, err := dateClaim(c, "nbf")
	if err != nil {
		return Token{}, err
	}
	nowSec, skew := now.Unix(), int64(v.c.ClockSkew/time.Second)
	switch {
	case !hasExp:
		return Token{}, invalidToken("No Expiration Time (exp) claim present.")
	case !hasIat:
		return Token{}, invalidToken("No Issued At (iat) claim present.")
	case nowSec-skew >= exp:
		return Token{}, invalidToken("The JWT is no longer valid - the evaluation time %d is on or after the Expiration Time (exp=%d) claim value (even when providing %d seconds of leeway to account for clock skew).", nowSec, exp, skew)
	case hasNbf && nowSec+skew < nbf:
		return Token{}, invalidToken("The JWT is not yet valid as the evaluation time %d is before the NotBefore (nbf=%d) claim time (even when providing %d seconds of leeway to account for clock skew).", nowSec, nbf, skew)
	case exp < 0 || iat < 0:
		return Token{}, invalidToken("exp and iat must be non-negative")
	}
	if err := v.checkAudience(c); err != nil {
		return Token{}, err
	}
	if iss, ok := c["iss"].(string); v.c.ExpectedIssuer != "" && (!ok || iss != v.c.ExpectedIssuer) {
		return Token{}, invalidToken("Issuer (iss) claim value (%v) doesn't match expected value of %s", c["iss"], v.c.ExpectedIssuer)
	}
	sub, err := jwtString(v.c.SubClaimName, c[v.c.SubClaimName])
	if err != nil {
		return Token{}, err
	}
	scope, err := v.scope(c)
	if err != nil {
		return Token{}, err
	}
	return Token{Principal: sub, Scope: scope, Expiry: time.Unix(exp, 0), IssuedAt: time.Unix(iat, 0)}, nil
}

// checkAudience is jose4j's AudValidator: with expected audiences the aud
// claim must name one; without, any aud claim is refused.
func (v *JWTValidator) checkAudience(c map[string]any) error {
	raw, present := c["aud"]
	var auds []string
	switch a := raw.(type) {
	case nil:
		present = false
	case string:
		auds = []string{a}
	case []any:
		for _, item := range a {
			s, ok := item.(string)
			if !ok {
				return invalidToken("the aud claim is not a string or an array of strings")
			}
			auds = append(auds, s)
		}
	default:
		return invalidToken("the aud claim is not a string or an array of strings")
	}
	switch {
	case !present && len(v.c.ExpectedAudience) > 0:
		return invalidToken("No Audience (aud) claim present.")
	case !present:
		return nil
	case len(v.c.ExpectedAudience) == 0:
		return invalidToken("Audience (aud) claim %v present in the JWT but no expected audience value(s) were provided", auds)
	}
	for _, a := range auds {
		if slices.Contains(v.c.ExpectedAudience, a) {
			return nil
		}
	}
	return invalidToken("Audience (aud) claim %v doesn't contain an acceptable identifier. Expected one of %v as an aud value.", auds, v.c.ExpectedAudience)
}

// scope reads the scope claim: a string is one item, an array its items,
// anything else no scope; items must be non-blank and distinct.
func (v *JWTValidator) scope(c map[string]any) ([]string, error) {
	var raw []any
	switch s := c[v.c.ScopeClaimName].(type) {
	case string:
		raw = []any{s}
	case []any:
		raw = s
	}
	scope := make([]string, 0, len(raw))
	for _, item := range raw {
		s, err := jwtString(v.c.ScopeClaimName, item)
		if err != nil {
			return nil, err
		}
		if slices.Contains(scope, s) {
			return nil, invalidToken("%s value must not contain duplicates - %s already present", v.c.ScopeClaimName, s)
		}
		scope = append(scope, s)
	}
	slices.Sort(scope)
	return scope, nil
}

// jwtString is ClaimValidationUtils.validateString: present, a string,
// non-blank; trimmed.
func jwtString(name string, v any) (string, error) {
	if v == nil {
		return "", invalidToken("%s value must be non-null", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", invalidToken("could not extract the '%s' claim from the access token", name)
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", invalidToken("%s value must be non-empty and not only whitespace", name)
	}
	return s, nil
}

// dateClaim reads a NumericDate claim as jose4j does: a number, truncated
// to whole seconds.
func dateClaim(c map[string]any, name string) (int64, bool, error) {
	v, ok := c[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok {
		return 0, false, invalidToken("the '%s' claim is not a NumericDate", name)
	}
	// Clamped, as Java's longValue saturates.
	return int64(max(min(f, 1<<62), -(1 << 62))), true, nil
}
