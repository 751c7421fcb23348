package cli

// LockStateDirForTest locks a state directory as a running node does.
var LockStateDirForTest = lockStateDir
