package tlsconf

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"os"
	"slices"
)

// material is one reading of the keystore and truststore, with the server
// configuration made from it and the state of the files it came from.
type material struct {
	certs  []tls.Certificate
	roots  *x509.CertPool // nil: the system's roots
	server *tls.Config
	files  []fileStamp
}

// fileStamp is what a file held when it was read: its content's hash
// (modification times are too coarse to tell two quick writes apart, and
// a store is a few kilobytes read once per check interval).
type fileStamp struct {
	path string
	sum  [sha256.Size]byte
	err  bool
}

// load reads both stores and builds the server configuration.
func (s *settings) load() (*material, error) {
	// Stamps first: a file replaced while it is read is read again at the
	// next check rather than missed.
	files := s.stamps()
	certs, err := s.loadKeystore()
	if err != nil {
		return nil, err
	}
	trusted, err := s.loadTruststore()
	if err != nil {
		return nil, err
	}
	m := &material{certs: certs, files: files}
	if trusted != nil {
		m.roots = x509.NewCertPool()
		for _, c := range trusted {
			m.roots.AddCert(c)
		}
	}
	m.server = &tls.Config{
		Certificates: certs,
		ClientAuth:   s.clientAuth,
		ClientCAs:    m.roots,
		MinVersion:   s.minVersion,
		MaxVersion:   s.maxVersion,
		CipherSuites: s.ciphers,
	}
	return m, nil
}

// stamps are the current states of the store files (inline PEM has none).
func (s *settings) stamps() []fileStamp {
	var out []fileStamp
	for _, path := range []string{s.keystore.location, s.truststore.location} {
		if path == "" {
			continue
		}
		st := fileStamp{path: path}
		if b, err := os.ReadFile(path); err == nil {
			st.sum = sha256.Sum256(b)
		} else {
			st.err = true
		}
		out = append(out, st)
	}
	return out
}

// current returns the material, first reading the files again when the
// check interval has passed and they changed. One caller checks; the
// others go on with what is there.
func (st *Store) current() *material {
	if now := st.clock.Now(); now.UnixNano() >= st.nextCheck.Load() && st.reloading.TryLock() {
		st.nextCheck.Store(now.Add(st.interval).UnixNano())
		st.reload()
		st.reloading.Unlock()
	}
	return st.cur.Load()
}

// CheckFiles reads the stores again now if their files changed; false
// means they changed and could not be used (logged).
func (st *Store) CheckFiles() bool {
	st.reloading.Lock()
	defer st.reloading.Unlock()
	return st.reload()
}

// reload replaces the material when the files changed and read well, as
// Kafka's dynamic keystore update does: a keystore whose certificate names
// another subject or other alternative names is refused unless
// ssl.allow.dn.changes or ssl.allow.san.changes allows it.
func (st *Store) reload() bool {
	old := st.cur.Load()
	now := st.s.stamps()
	switch {
	case slices.Equal(now, old.files):
		return true
	case slices.Equal(now, st.failed):
		return false
	}
	m, err := st.s.load()
	if err == nil {
		dn, san := sameIdentity(old.certs, m.certs)
		switch {
		case !dn && !st.s.allowDN:
			err = st.s.errorf(KeyAllowDNChanges, "is false and the new keystore's certificate has another subject")
		case !san && !st.s.allowSAN:
			err = st.s.errorf(KeyAllowSANChanges, "is false and the new keystore's certificate has other subject alternative names")
		}
	}
	if err != nil {
		st.failed = now
		st.log.Error("keystore or truststore changed but cannot be used; keeping the previous ones", "err", err)
		return false
	}
	st.failed = nil
	st.cur.Store(m)
	st.log.Info("keystore and truststore read again after a change", "files", len(m.files))
	return true
}
