/// A JSON string literal, escaped the way Python's `json.dumps` does.
///
/// One writer for every place the library prints JSON text by hand (the
/// chat templates' `tojson`, structured output's ordered JSON), so they
/// cannot drift apart: quotes, backslashes and control characters escaped
/// (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00XX`), and with `asciiOnly`
/// every non-ASCII scalar as UTF-16 `\uXXXX` units, as `ensure_ascii` does.
enum JSONStringLiteral {
  /// Appends `text`, quoted, to `out`.
  static func append(_ text: String, to out: inout String, asciiOnly: Bool = false) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      default:
        if scalar.value < 0x20 || (asciiOnly && scalar.value > 0x7E) {
          for unit in String(scalar).utf16 { out += "\\u" + hex4(unit) }
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }

  /// `text` as a quoted JSON string.
  static func quoted(_ text: String) -> String {
    var out = ""
    append(text, to: &out)
    return out
  }

  private static func hex4(_ unit: UInt16) -> String {
    let digits = String(unit, radix: 16)
    return String(repeating: "0", count: 4 - digits.count) + digits
  }
}
