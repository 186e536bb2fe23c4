---- MODULE AssertErr ----
\* TLCExt's AssertError(err, exp), by hand from TLC's Java override: TRUE exactly when exp fails
\* with the message err. A failed Assert(c, s), s a string, fails with "The first argument of
\* Assert evaluated to FALSE; the second argument was:" and a new line, then s quoted, its quotes,
\* backslashes, tabs and new lines escaped. An exp that evaluates, to any value, gives FALSE.
EXTENDS Naturals, TLC, TLCExt

ASSUME AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"boom\"",
                   Assert(FALSE, "boom"))
\* The message is TLC's whole text, not the Assert's own string.
ASSUME ~AssertError("boom", Assert(FALSE, "boom"))
ASSUME ~AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"bang\"",
                    Assert(FALSE, "boom"))
\* No error: FALSE, whatever exp's value.
ASSUME ~AssertError("boom", FALSE)
ASSUME ~AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"boom\"",
                    Assert(TRUE, "boom"))
\* The string as TLC prints it: a"b\c, then a tab and a new line.
ASSUME AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"a\\\"b\\\\c\\t\\n\"",
                   Assert(FALSE, "a\"b\\c\t\n"))
\* From inside a definition, a function and a LET: TLC builds [x \in 1 .. 3 |-> ...] in order, at
\* once (its domain is an interval), so x = 2 fails first.
Check(x) == Assert(x < 2, "too big: " \o ToString(x))
ASSUME AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"too big: 2\"",
                   LET f == [x \in 1 .. 3 |-> Check(x)] IN f[3])
\* TLC's Assert fails the same way when its first argument is no Boolean.
ASSUME AssertError("The first argument of Assert evaluated to FALSE; the second argument was:\n\"odd\"",
                   Assert(1, "odd"))
====
