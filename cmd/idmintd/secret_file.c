/* SPDX-License-Identifier: Apache-2.0 */
#include "secret_file.h"

#include <stdio.h>

int secret_file_check(const char *what, const char *path, const struct stat *st, char *err,
                      size_t err_size)
{
    unsigned mode = (unsigned)st->st_mode & 07777u;
    int is_others = (mode & 0007u) != 0, is_group_write = (mode & 0020u) != 0;

    if (!is_others && !is_group_write)
        return 0;
    snprintf(err, err_size,
             "%s '%s' is not private: its mode is %04o (%s%s%s); make it private with "
             "'chmod 600 %s' (or 640 to let its group read it)",
             what, path, mode, is_group_write ? "its group may write it" : "",
             is_group_write && is_others ? ", " : "", is_others ? "others have access" : "", path);
    return -1;
}
