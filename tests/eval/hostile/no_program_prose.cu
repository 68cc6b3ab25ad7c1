// what: prose with no FORMAT line
// expect: no-program
I would store the matrix in CSR and give each row to one thread.
