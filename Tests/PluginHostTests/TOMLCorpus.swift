/// TOML documents for the parser's conformance and differential tests: valid ones (each shape
/// of TOML 1.0 the specification shows) and invalid ones (each rule it states, and the inputs
/// that once aborted the process), written for this project.
enum TOMLCorpus {
    /// Documents every TOML 1.0 parser must accept.
    static let valid: [String] = [
        "",
        "# only a comment\n",
        "\n\n  \t\n",
        "a = 1",
        "a = 1\r\nb = 2\r\n",
        "key = \"value\"\nbare_key = \"value\"\nbare-key = \"value\"\n1234 = \"value\"\n",
        "\"127.0.0.1\" = \"value\"\n\"character encoding\" = \"value\"\n\"ʎǝʞ\" = \"value\"\n'key2' = \"value\"\n'quoted \"value\"' = \"value\"\n",
        "\"\" = \"blank\"\n",
        "'' = 'blank'\n",
        "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n",
        "fruit.name = \"banana\"\nfruit. color = \"yellow\"\nfruit . flavor = \"banana\"\n",
        "apple.type = \"fruit\"\norange.type = \"fruit\"\napple.skin = \"thin\"\norange.skin = \"thick\"\n",
        "3.14159 = \"pi\"\n",
        "str = \"I'm a string. \\\"You can quote me\\\". Name\\tJos\\u00E9\\nLocation\\tSF.\"\n",
        "s = \"\\b\\t\\n\\f\\r\\\"\\\\ \\u0000 \\U0001F600 \\u007F\"\n",
        "str1 = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n",
        "str2 = \"\"\"\nThe quick brown \\\n\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n",
        "str3 = \"\"\"\\\n       The quick brown \\\n       fox jumps over \\\n       the lazy dog.\\\n       \"\"\"\n",
        "str4 = \"\"\"Here are two quotation marks: \"\". Simple enough.\"\"\"\n",
        "str5 = \"\"\"Here are three quotation marks: \"\"\\\".\"\"\"\n",
        "str7 = \"\"\"\"This,\" she said, \"is just a pointless statement.\"\"\"\"\n",
        "s = \"\"\"a \\   \n  b\"\"\"\n",
        "s = \"\"\"\ttab\t\"\"\"\n",
        "seven = \"\"\"\"\"\"\"\neight = ''''''''\n",
        "winpath = 'C:\\Users\\nodejs\\templates'\nquoted = 'Tom \"Dubs\" Preston-Werner'\nregex = '<\\i\\c*\\s*>'\n",
        "regex2 = '''I [dw]on't need \\d{2} apples'''\nlines = '''\nThe first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n'''\n",
        "quot15 = '''Here are fifteen quotation marks: \"\"\"\"\"\"\"\"\"\"\"\"\"\"\"'''\napos15 = \"Here are fifteen apostrophes: '''''''''''''''\"\nstr = ''''That,' she said, 'is still pointless.''''\n",
        "int1 = +99\nint2 = 42\nint3 = 0\nint4 = -17\nint5 = 1_000\nint6 = 5_349_221\nint7 = 53_49_221\nint8 = 1_2_3_4_5\n",
        "hex1 = 0xDEADBEEF\nhex2 = 0xdeadbeef\nhex3 = 0xdead_beef\noct1 = 0o01234567\noct2 = 0o755\nbin1 = 0b11010110\n",
        "max = 9223372036854775807\nmin = -9223372036854775808\nzero = +0\nnegzero = -0\n",
        "flt1 = +1.0\nflt2 = 3.1415\nflt3 = -0.01\nflt4 = 5e+22\nflt5 = 1e06\nflt6 = -2E-2\nflt7 = 6.626e-34\nflt8 = 224_617.445_991_228\n",
        "sf1 = inf\nsf2 = +inf\nsf3 = -inf\nsf4 = nan\nsf5 = +nan\nsf6 = -nan\n",
        "big = 1e400\ntiny = 1e-400\nnegzero = -0.0\nzero_exp = 0e0\nexp_zeros = 1e-05\n",
        "bool1 = true\nbool2 = false\n",
        "odt1 = 1979-05-27T07:32:00Z\nodt2 = 1979-05-27T00:32:00-07:00\nodt3 = 1979-05-27T00:32:00.999999-07:00\nodt4 = 1979-05-27 07:32:00Z\n",
        "ldt1 = 1979-05-27T07:32:00\nldt2 = 1979-05-27T00:32:00.999999\nld1 = 1979-05-27\nlt1 = 07:32:00\nlt2 = 00:32:00.999999\n",
        "lower = 1979-05-27t07:32:00z\nnanos = 1979-05-27T07:32:00.123456789+05:30\nzero_frac = 07:32:00.000\nneg_zero = 2000-01-01T00:00:00-00:00\n",
        "leap = 2024-02-29\ncentury = 2000-02-29\nfirst = 0001-01-01\nlast = 9999-12-31T23:59:59.999999\n",
        "integers = [ 1, 2, 3 ]\ncolors = [ \"red\", \"yellow\", \"green\" ]\nnested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]\nnested_mixed_array = [ [ 1, 2 ], [\"a\", \"b\", \"c\"] ]\nstring_array = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''' ]\n",
        "numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]\ncontributors = [\n  \"Foo Bar <foo@example.com>\",\n  { name = \"Baz Qux\", email = \"bazqux@example.com\", url = \"https://example.com/bazqux\" }\n]\n",
        "integers2 = [\n  1, 2, 3\n]\nintegers3 = [\n  1,\n  2, # this is ok\n]\n",
        "empty = []\nempty_nested = [[], [[]]]\nspaced = [ ]\ncommented = [ # a\n # b\n]\n",
        "[table]\n",
        "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\nkey2 = 456\n",
        "[dog.\"tater.man\"]\ntype.name = \"pug\"\n",
        "[a.b.c]\n[ d.e.f ]\n[ g .  h  . i ]\n[ j . \"ʞ\" . 'l' ]\n",
        "[x.y.z.w]\n[x]\n",
        "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n\n[fruit.apple.texture]\nsmooth = true\n",
        "fruit.apple.color = \"red\"\nfruit.apple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true\n",
        "top = 1\n[a]\nx = 1\n[b]\ny = 2\n[a.c]\nz = 3\n",
        "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\n",
        "empty = {}\nspaced = {   }\nnested = { a = { b = { c = 1 } } }\nwith_array = { list = [1, 2], t = [{ x = 1 }] }\n",
        "inline = { a.b = 1, a.c = 2 }\n",
        "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]  # empty table within the array\n\n[[products]]\nname = \"Nail\"\nsku = 284758393\n\ncolor = \"gray\"\n",
        "[[fruits]]\nname = \"apple\"\n\n[fruits.physical]\ncolor = \"red\"\nshape = \"round\"\n\n[[fruits.varieties]]\nname = \"red delicious\"\n\n[[fruits.varieties]]\nname = \"granny smith\"\n\n[[fruits]]\nname = \"banana\"\n\n[[fruits.varieties]]\nname = \"plantain\"\n",
        "points = [ { x = 1, y = 2, z = 3 },\n           { x = 7, y = 8, z = 9 },\n           { x = 2, y = 4, z = 8 } ]\n",
        "[[a.b]]\n[a]\nc = 1\n",
        "a = 1 # trailing comment\nb = \"# not a comment\" # a comment\n",
        "key = \"value\" \t # comment with\ttab\n",
        "\"quoted\\u0041key\" = 1\n",
        "a = \"Ünïcödé ✓ 😀\"\n# Ünïcödé in a comment ✓\n",
        "a = true#no space\nb = [1,2,]\n",
        "x = [\"a\"\n,\"b\"]\n",
        "name = \"demo\"\ndescription = \"A demo\"\nbase_url = \"https://api.example.com/v1\"\nauth = { kind = \"header_key\", header = \"X-Key\", env = \"APIMACRO_DEMO_KEY\" }\n\n[endpoints.find]\npath = \"/find/{id}\"\nparams = { id = \"string!\", limit = \"int\" }\nresult = \"data.items\"\n",
        "format = \"table\"\nmax_wait = 30\nrequest_timeout = 10\nplugins = [\"/opt/plugins\"]\n\n[shared]\nredis = \"redis://:password@redis.internal:6379/0\"\ntimeout = 2\n\n[github]\nurl = \"https://github.example.com/api/v3\"\n",
    ]

    /// Integers past 64 bits: TOML 1.0 asks for an error (tomllib keeps them, as Python ints).
    static let outOfRange: [String] = [
        "a = 9223372036854775808\n", "a = -9223372036854775809\n", "a = 0x10000000000000000\n",
        "a = [1, 99999999999999999999]\n",
    ]

    /// Documents every TOML 1.0 parser must refuse; the first ones aborted the process once.
    static let invalid: [String] = [
        // Issue 24: a date, a space, a digit (toml++ aborted on it in debug builds).
        "a = 1979-05-27 5\n",
        "a = 1979-05-27 5",
        "a = 1979-05-27T5\n",
        // Found by fuzzing the TOMLKit reader: each stopped toml++ on an assertion.
        "[!\"\n", "[[ =a]]\n", "x = 1\n  [ ]\n", "[\n", "[[\n", "\u{FEFF}[\u{FFFD}[$'[", "\u{FEFF}[!x]",
        "n =[}\n", "a = }\n", "a = [1, ,]\n", "a = # no value\n", "a = {!b = 1}\n", "a = {b = 1,}\n", "a = [1}\n",
        "a = {b = 1]\n", "a = \u{3000}1\n",
        // keys
        "= 1\n", "a b = 1\n", "a. = 1\n", ".a = 1\n", "a..b = 1\n", "a = 1 = 2\n", "a\n= 1\n", "\"a\nb\" = 1\n",
        "\"\"\"a\"\"\" = 1\n", "'''a''' = 1\n", "a = 1\na = 2\n", "a = 1\n\"a\" = 2\n", "a.b = 1\na.b = 2\n",
        "a = 1\na.b = 2\n", "a.b = 1\na = 2\n", "ʞ = 1\n", "a = \n", "a\n", "a =", "[a]\nb = 1\nb = 2\n",
        // strings
        "a = \"unterminated\n", "a = \"line\nbreak\"\n", "a = 'unterminated\n", "a = \"\\x41\"\n", "a = \"\\e\"\n",
        "a = \"\\u12\"\n", "a = \"\\uD800\"\n", "a = \"\\U00110000\"\n", "a = \"\\U0000004G\"\n", "a = \"\\ \"\n",
        "a = \"\u{01}\"\n", "a = '\u{01}'\n", "a = \"\"\"\u{7F}\"\"\"\n", "a = '''\u{00}'''\n",
        "a = \"\"\"a \\ b\"\"\"\n",
        "a = \"\"\"unterminated\n", "a = '''unterminated\n", "a = \"\"\"\"\"\"\"\"\"\n", "a = '''''''''\n",
        "a = \"\\\"\n",
        "a = \"tab\\\tx\"\n", "a = 'x''\n",
        // numbers
        "a = 01\n", "a = +01\n", "a = 1__0\n", "a = _1\n", "a = 1_\n", "a = 0x\n", "a = 0xG\n", "a = 0X1F\n",
        "a = +0x1F\n", "a = 0x_1\n", "a = 0o8\n", "a = 0b2\n", "a = 0B1\n", "a = 1.\n", "a = .1\n", "a = 1.e5\n",
        "a = 1e\n", "a = 1e_5\n", "a = 1_.5\n", "a = 1._5\n", "a = 3.14.15\n", "a = 1e5.5\n", "a = ++1\n",
        "a = -+1\n",
        "a = infinity\n", "a = NaN\n", "a = Inf\n", "a = - 1\n", "a = 1 2\n", "a = 0.0.0\n",
        // booleans
        "a = True\n", "a = FALSE\n", "a = tru\n", "a = truee\n",
        // dates and times
        "a = 1979-02-30\n", "a = 2023-02-29\n", "a = 1900-02-29\n", "a = 0000-01-01\n", "a = 1979-13-01\n",
        "a = 1979-00-01\n", "a = 1979-01-32\n", "a = 1979-1-01\n", "a = 79-01-01\n", "a = 1979-01-01T24:00:00\n",
        "a = 1979-01-01T23:60:00\n", "a = 1979-01-01T23:59:60\n", "a = 07:32\n", "a = 7:32:00\n",
        "a = 07:32:00.\n", "a = 1979-05-27T07:32:00+7:00\n", "a = 1979-05-27T07:32:00+07\n",
        "a = 1979-05-27T07:32:00+24:00\n", "a = 1979-05-27T07:32:00Zz\n", "a = 1979-05-27  07:32:00\n",
        "a = 1979-05-27X07:32:00\n", "a = 07:32:00Z\n", "a = 1979-05-27T07:32:00.123+\n",
        // arrays and inline tables
        "a = [\n", "a = [1\n", "a = [1 2]\n", "a = [,]\n", "a = [1,,]\n", "a = {\n", "a = { b = 1\n",
        "a = { b = 1 c = 2 }\n", "a = { b = 1,\n c = 2 }\n", "a = {\nb = 1 }\n", "a = { b = 1, b = 2 }\n",
        "a = { b.c = 1, b = 2 }\n", "a = { b = { c = 1 }, b.d = 2 }\n", "a = { b = [1], b.c = 2 }\n",
        "a = { , }\n", "a = { b }\n",
        // tables
        "[a]\n[a]\n", "[a.b]\n[a.b]\n", "a = 1\n[a]\n", "[a]\nb = 1\n[a.b]\n", "[]\n", "[a.]\n", "[.a]\n", "[a..b]\n",
        "[a] b = 1\n", "[a\n]\n", "[a]]\n", "[[a]\n", "[[a]]]\n", "[ [a]]\n", "[a]\n[[a]]\n", "[[a]]\n[a]\n",
        "a = []\n[[a]]\n", "a = [{ b = 1 }]\n[[a]]\n", "a = { b = 1 }\n[a]\n", "a = { b = 1 }\n[a.c]\n",
        "a = { b = 1 }\na.c = 2\n", "a = [1]\na.b = 2\n", "[a]\nb.c = 1\n[a.b]\n", "a.b = 1\n[a]\n",
        "[a.b]\nc = 1\n[a]\nb = 2\n", "[fruit]\napple.color = \"red\"\n[fruit.apple]\n",
        "[[fruits]]\nname = \"apple\"\n[[fruits.varieties]]\nname = \"red\"\n[fruits.varieties]\nname = \"granny\"\n",
        "[fruit.physical]\ncolor = \"red\"\n[[fruit]]\nname = \"apple\"\n",
        // statements, comments and characters
        "a = 1 b = 2\n", "a = 1 # ok\n b\n", "# \u{00}\n", "# \u{7F}\n", "a = 1 # \u{08}\n", "\u{FEFF}a = 1\n",
        "a = 1\rb = 2\n", "a = 1\r\n\r", "\u{00A0}a = 1\n", "a\u{00A0}= 1\n", "!a = 1\n", "a = 1 ]\n",
    ]
}
