#pragma once
// No kernel includes this header: editing it changes no key.
