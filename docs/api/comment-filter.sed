# doxygen input filter for include/warden: a line that is only a // comment
# becomes a /// comment, so the block of such lines above a declaration is its
# documentation. Lines that are already /// are left as they are.
s|^\([[:space:]]*\)//\([^/]\)|\1///\2|
s|^\([[:space:]]*\)//$|\1///|
# A comment after a member or an enumerator (after its ; or ,) documents it: ///<.
s|\([;,]\)\([[:space:]]*\)//\([^/]\)|\1\2///<\3|
# A placeholder in a comment, such as <owner>, is text, not an HTML tag (which
# doxygen would warn about): it is shown as written. Template arguments, which
# follow a name (completion<void>), are left alone.
/^[[:space:]]*\/\/\//s/\(^\|[^[:alnum:]_]\)<\([[:alpha:]_][[:alnum:]_ ]*\)>/\1\\<\2\\>/g
# The comment a header opens with describes the header itself (\file), not the
# first declaration after it. Put at the end of the line, so that the line
# numbers in doxygen's warnings stay the header's.
1s|^\(///.*\)$|\1 \\file|
