// SPDX-License-Identifier: Apache-2.0
// Mints 5 IDs from the namespace "default" of the authority named on the
// command line and prints them, one per line: the smallest whole program
// against an installed libidmint-java, run as a single source file:
//   java -cp /usr/share/java/idmint.jar Hello.java sqlite:/tmp/hello.db
import org.idmint.IdmintException;
import org.idmint.Minter;

public class Hello {
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java -cp idmint.jar Hello.java AUTHORITY"
                    + "   (e.g. sqlite:/tmp/hello.db)");
            System.exit(2);
        }
        // Closing releases the worker lease, so the next run need not wait for it.
        try (Minter m = Minter.open(args[0], "default")) {
            for (int i = 0; i < 5; i++) {
                System.out.println(m.next());
            }
        } catch (IdmintException e) {
            System.err.println("hello: " + args[0] + ": " + e.getMessage());
            System.exit(1);
        }
    }
}
