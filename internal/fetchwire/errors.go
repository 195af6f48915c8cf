package fetchwire

// ErrorCount is how often one error code appears in a response.
type ErrorCount struct {
	Code  int16
	Count int
}

// tallyErrors counts r's error codes as Kafka's FetchResponse.errorCounts
// does: the top-level code once (NONE before v7 too) and every partition's.
// Most responses carry one or two distinct codes, kept in e's own array.
func (e *Encoded) tallyErrors(r *Response) {
	e.errs = e.errBuf[:0]
	e.countError(r.ErrorCode)
	for i := range r.Topics {
		for j := range r.Topics[i].Partitions {
			e.countError(r.Topics[i].Partitions[j].ErrorCode)
		}
	}
}

func (e *Encoded) countError(code int16) {
	for i := range e.errs {
		if e.errs[i].Code == code {
			e.errs[i].Count++
			return
		}
	}
	e.errs = append(e.errs, ErrorCount{Code: code, Count: 1})
}

// ErrorCounts returns the response's error codes and how many times each
// appears (request metrics count errors by code, NONE included); the
// caller must not modify it.
func (e *Encoded) ErrorCounts() []ErrorCount { return e.errs }
