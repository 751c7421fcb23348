package cell

import (
	"fmt"
	"strconv"
)

// ErrorKind classifies an *Error for errors.Is.
type ErrorKind int

// Kinds of *Error.
const (
	_ ErrorKind = iota
	KindClosed
	KindKeyTooLarge
	KindValueTooLarge
	KindTooManyKeys
	KindPutUndefined
	KindStartAndStartAfter
	KindListLimit
	KindDeleteAllInTransaction
	KindTransactionStatement
	KindBindingCount
	KindMultiStatementBindings
	KindNoStatement
	KindUnsupportedArgument
	KindOneNoResults
	KindOneMultipleResults
)

// Error is a storage API error whose Message is the exact text workerd
// throws and whose Name is the JavaScript class it throws it as, so the JS
// layer can rethrow it verbatim: new globalThis[e.Name](e.Message).
//
// errors.Is matches on Kind, so the sentinels below work for errors whose
// message carries data (sizes, counts).
type Error struct {
	Kind    ErrorKind
	Name    string // "Error", "TypeError" or "RangeError"
	Message string
}

func (e *Error) Error() string { return e.Message }

// JSName is the JavaScript error class to throw.
func (e *Error) JSName() string { return e.Name }

// Is reports whether target is an *Error of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind != 0 && t.Kind == e.Kind
}

// Sentinels. Those with fixed text are returned as they are; the others
// (sizes and counts in the text) only serve errors.Is.
//
// Sources of the texts: the conformance fixtures recorded on workerd
// (do-storage-list, do-storage-kv, do-sql), workerd's
// src/workerd/io/actor-storage.c++ (key, value and pair-count limits),
// src/workerd/api/actor-state.c++ (deleteAll in a transaction) and
// src/workerd/util/sqlite.c++ (statement preparation).
var (
	ErrClosed        = &Error{Kind: KindClosed, Name: "Error", Message: "cell: database is closed"}
	ErrKeyTooLarge   = &Error{Kind: KindKeyTooLarge, Name: "RangeError"}
	ErrValueTooLarge = &Error{Kind: KindValueTooLarge, Name: "RangeError"}
	ErrTooManyKeys   = &Error{Kind: KindTooManyKeys, Name: "RangeError"}

	// ErrPutUndefined is never returned by this package (values are bytes
	// here); the JS layer throws it for put(key, undefined).
	ErrPutUndefined = &Error{Kind: KindPutUndefined, Name: "TypeError",
		Message: "put() called with undefined value."}

	ErrStartAndStartAfter = &Error{Kind: KindStartAndStartAfter, Name: "TypeError",
		Message: "list() cannot be called with both start and startAfter values."}
	ErrListLimit = &Error{Kind: KindListLimit, Name: "TypeError",
		Message: "List limit must be positive."}
	ErrDeleteAllInTransaction = &Error{Kind: KindDeleteAllInTransaction, Name: "Error",
		Message: "Cannot call deleteAll() within a transaction"}

	ErrTransactionStatement = &Error{Kind: KindTransactionStatement, Name: "Error",
		Message: "To execute a transaction, please use the state.storage.transaction() or " +
			"state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT " +
			"statements. The JavaScript API is safer because it will automatically roll back on " +
			"exceptions, and because it interacts correctly with Durable Objects' automatic " +
			"atomic write coalescing."}
	ErrBindingCount = &Error{Kind: KindBindingCount, Name: "Error",
		Message: "Wrong number of parameter bindings for SQL query."}
	ErrMultiStatementBindings = &Error{Kind: KindMultiStatementBindings, Name: "Error",
		Message: "When executing multiple SQL statements in a single call, only the last statement can have parameters."}
	ErrNoStatement = &Error{Kind: KindNoStatement, Name: "Error",
		Message: "SQL code did not contain a statement."}
	ErrUnsupportedArgument = &Error{Kind: KindUnsupportedArgument, Name: "TypeError"}
	ErrOneNoResults        = &Error{Kind: KindOneNoResults, Name: "Error",
		Message: "Expected exactly one result from SQL query, but got no results."}
	ErrOneMultipleResults = &Error{Kind: KindOneMultipleResults, Name: "Error",
		Message: "Expected exactly one result from SQL query, but got multiple results."}
)

func errKeyTooLarge(limit, n int) *Error {
	return &Error{Kind: KindKeyTooLarge, Name: "RangeError", Message: "Keys cannot be larger than " +
		strconv.Itoa(limit) + " bytes. A key of size " + strconv.Itoa(n) + " was provided."}
}

func errValueTooLarge(limit, n int) *Error {
	return &Error{Kind: KindValueTooLarge, Name: "RangeError", Message: "Values cannot be larger than " +
		strconv.Itoa(limit) + " bytes. A value of size " + strconv.Itoa(n) + " was provided."}
}

func errTooManyKeys(max, n int) *Error {
	return &Error{Kind: KindTooManyKeys, Name: "RangeError", Message: "Maximum number of key value pairs is " +
		strconv.Itoa(max) + ". " + strconv.Itoa(n) + " pairs were provided."}
}

func errUnsupportedArgument(i int, v any) *Error {
	return &Error{Kind: KindUnsupportedArgument, Name: "TypeError",
		Message: fmt.Sprintf("cell: SQL binding %d has unsupported type %T", i+1, v)}
}

// SQLError is an error reported by SQLite. Its Error text follows workerd:
// the SQLite message, " at offset N" when SQLite knows where in the
// statement the problem is, then the result code name and, when it adds
// information, the extended code name:
//
//	near "SELEC": syntax error at offset 0: SQLITE_ERROR
//	UNIQUE constraint failed: items.name: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)
type SQLError struct {
	Code         int    // primary result code (SQLITE_ERROR, SQLITE_CONSTRAINT, ...)
	ExtendedCode int    // extended result code; equals Code when there is none
	Message      string // sqlite3_errmsg
	Offset       int    // byte offset in the statement, -1 when unknown
}

func (e *SQLError) Error() string {
	s := e.Message
	if e.Offset >= 0 {
		s += " at offset " + strconv.Itoa(e.Offset)
	}
	s += ": " + codeName(e.Code)
	if e.ExtendedCode != e.Code {
		s += " (extended: " + codeName(e.ExtendedCode) + ")"
	}
	return s
}

// JSName is the JavaScript error class to throw.
func (e *SQLError) JSName() string { return "Error" }

func codeName(code int) string {
	if n, ok := resultCodeNames[int32(code)]; ok {
		return n
	}
	return "SQLITE_UNKNOWN_" + strconv.Itoa(code)
}
