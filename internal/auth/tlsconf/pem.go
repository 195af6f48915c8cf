package tlsconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
)

// pemKeyPair reads a PEM keystore: one private key (PKCS#8, optionally
// encrypted with ssl.key.password as Kafka's PEM stores take it; PKCS#1
// and SEC1 keys are accepted too) and the certificate chain, leaf first.
func pemKeyPair(data []byte, keyPass secret) (tls.Certificate, error) {
	var key any
	var chain []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("certificate: %w", err)
			}
			chain = append(chain, c)
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			if key != nil {
				return tls.Certificate{}, errors.New("more than one private key")
			}
			k, err := parsePEMKey(block, keyPass)
			if err != nil {
				return tls.Certificate{}, err
			}
			key = k
		}
	}
	if key == nil {
		return tls.Certificate{}, errors.New("no private key in the PEM data")
	}
	return keyPair(key, chain)
}

func parsePEMKey(block *pem.Block, keyPass secret) (any, error) {
	der := block.Bytes
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(der)
	case "ENCRYPTED PRIVATE KEY":
		if !keyPass.set {
			return nil, errors.New("the private key is encrypted and ssl.key.password is not set")
		}
		var err error
		if der, err = decryptPKCS8(der, []byte(keyPass.value)); err != nil {
			return nil, err
		}
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil && block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("wrong ssl.key.password: the private key does not decrypt")
	}
	return k, err
}

// pemCertificates reads every CERTIFICATE block.
func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}

// PKCS#5 v2 (RFC 8018) identifiers: what openssl pkcs8 -topk8 -v2 and
// Java write for encrypted PKCS#8 keys.
var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	Data      []byte
}

type pbes2Params struct {
	KeyDerivation pkix.AlgorithmIdentifier
	Encryption    pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// decryptPKCS8 decrypts a PBES2 (PBKDF2 + AES-CBC or 3DES-CBC) encrypted
// PKCS#8 key; Go's standard library reads only unencrypted ones.
func decryptPKCS8(der, password []byte) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encrypted private key: unsupported scheme %v (want PBES2)", info.Algorithm.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("encrypted private key: PBES2 parameters: %w", err)
	}
	if !params.KeyDerivation.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("encrypted private key: unsupported key derivation %v", params.KeyDerivation.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KeyDerivation.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("encrypted private key: PBKDF2 parameters: %w", err)
	}
	newBlock, keyLen, err := blockCipher(params.Encryption.Algorithm)
	if err != nil {
		return nil, err
	}
	prf, err := prfHash(kdf.PRF.Algorithm)
	if err != nil {
		return nil, err
	}
	key, err := pbkdf2.Key(prf, string(password), kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Encryption.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("encrypted private key: IV: %w", err)
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if len(iv) != block.BlockSize() || len(info.Data)%block.BlockSize() != 0 || len(info.Data) == 0 {
		return nil, errors.New("encrypted private key: malformed ciphertext")
	}
	plain := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.Data)
	return unpad(plain, block.BlockSize())
}

func blockCipher(oid asn1.ObjectIdentifier) (func([]byte) (cipher.Block, error), int, error) {
	switch {
	case oid.Equal(oidAES128CBC):
		return aes.NewCipher, 16, nil
	case oid.Equal(oidAES192CBC):
		return aes.NewCipher, 24, nil
	case oid.Equal(oidAES256CBC):
		return aes.NewCipher, 32, nil
	case oid.Equal(oidDESEDE3CBC):
		return des.NewTripleDESCipher, 24, nil
	}
	return nil, 0, fmt.Errorf("encrypted private key: unsupported cipher %v", oid)
}

func prfHash(oid asn1.ObjectIdentifier) (func() hash.Hash, error) {
	switch {
	case len(oid) == 0, oid.Equal(oidHMACSHA1):
		return sha1.New, nil
	case oid.Equal(oidHMACSHA256):
		return sha256.New, nil
	case oid.Equal(oidHMACSHA384):
		return sha512.New384, nil
	case oid.Equal(oidHMACSHA512):
		return sha512.New, nil
	}
	return nil, fmt.Errorf("encrypted private key: unsupported PRF %v", oid)
}

// unpad strips PKCS#7 padding; bad padding is the usual sign of a wrong
// password.
func unpad(b []byte, size int) ([]byte, error) {
	n := int(b[len(b)-1])
	if n == 0 || n > size || n > len(b) {
		return nil, errors.New("wrong ssl.key.password: the private key does not decrypt")
	}
	for _, p := range b[len(b)-n:] {
		if int(p) != n {
			return nil, errors.New("wrong ssl.key.password: the private key does not decrypt")
		}
	}
	return b[:len(b)-n], nil
}
