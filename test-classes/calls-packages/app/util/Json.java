package app.util;

public final class Json {
    private Json() {}

    /** Selected: this overload only. */
    public static String parse(String text) {
        return text.trim();
    }

    /** Not selected: another overload of the same name. */
    public static String parse(int value) {
        return Integer.toString(value);
    }

    /** Not selected: another method of the same class. */
    public static String format(int value) {
        return "" + value;
    }
}
