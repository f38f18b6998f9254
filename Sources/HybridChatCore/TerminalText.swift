import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Makes text the command did not write itself (a model's answer, a
/// server's error, a model name) harmless to print on a terminal.
///
/// Why: a terminal obeys the control characters it is sent. A model, or a
/// server pretending to be one, that answers with `ESC [ 2 J` clears the
/// screen; `ESC ] 52` writes the clipboard; `ESC ] 8` plants a link under
/// innocent text; a carriage return or backspaces overwrite what was shown.
/// So every control character except line feed and tab, which text needs,
/// is printed as a visible escape instead: C0 controls (carriage return as
/// `\r`, ESC as `\u{1B}`), DEL, and C1 controls (U+0080 to U+009F, which
/// some terminals obey as 8-bit CSI and OSC). With ESC gone no sequence can
/// begin, and what followed it (`[2J`) is plain text. Everything else,
/// Unicode letters, emoji and right-to-left text included, is printed as it
/// came.
///
/// Applied to every answer printed as text, whether or not stdout is a
/// terminal (a saved answer is read on one later); `--json` prints the exact
/// text instead, as JSON escapes (`TerminalText.json`).
public enum TerminalText {
  /// `text` with its control characters, other than line feed and tab,
  /// replaced by visible escapes.
  /// - Parameter keepingLineBreaks: Whether line feed and tab pass (an
  ///   answer); false escapes them too (one line of a report).
  public static func neutralized(_ text: some StringProtocol, keepingLineBreaks: Bool = true) -> String {
    guard text.unicodeScalars.contains(where: { isControl($0, keepingLineBreaks: keepingLineBreaks) }) else {
      return String(text)
    }
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      if isControl(scalar, keepingLineBreaks: keepingLineBreaks) {
        result += ServerText.escape(scalar)
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// A JSON line with DEL and the C1 controls written as `\u` escapes too:
  /// JSON requires it only below U+0020 (which `JSONEncoder` does), and a
  /// terminal that shows the line would obey the others. The value the line
  /// holds is unchanged.
  public static func json(_ line: String) -> String {
    guard line.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return line }
    var result = ""
    for scalar in line.unicodeScalars {
      if (0x7F...0x9F).contains(scalar.value) {
        result += "\\u00" + String(scalar.value, radix: 16, uppercase: false)
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private static func isControl(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool) -> Bool {
    switch scalar.value {
    case 0x0A, 0x09: !keepingLineBreaks
    case 0x00...0x1F, 0x7F...0x9F: true
    default: false
    }
  }
}
