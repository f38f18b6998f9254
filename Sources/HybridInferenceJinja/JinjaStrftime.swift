import Foundation

/// `strftime_now(format)`: the C `strftime` codes templates use, in UTC.
enum JinjaStrftime {
  private static let months = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
  ]
  private static let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

  static func format(_ date: Date, _ format: String) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
    let (year, month, day) = (parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    let weekday = weekdays[((parts.weekday ?? 1) - 1) % 7]
    func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
    var out = ""
    var iterator = format.makeIterator()
    while let character = iterator.next() {
      guard character == "%", let code = iterator.next() else {
        out.append(character)
        continue
      }
      switch code {
      case "Y": out += String(year)
      case "y": out += two(year % 100)
      case "m": out += two(month)
      case "d": out += two(day)
      case "e": out += String(format: "%2d", day)
      case "B": out += months[month - 1]
      case "b", "h": out += String(months[month - 1].prefix(3))
      case "A": out += weekday
      case "a": out += String(weekday.prefix(3))
      case "H": out += two(parts.hour)
      case "M": out += two(parts.minute)
      case "S": out += two(parts.second)
      case "%": out += "%"
      default: out += "%" + String(code)
      }
    }
    return out
  }
}
